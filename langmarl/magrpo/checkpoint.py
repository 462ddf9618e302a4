"""Checkpoints of the weight-space trainers: one ``save_pretrained`` directory per agent.

Layout of ``<run>/checkpoints/step-000004/``::

    trainer_state.json        step, skipped updates, config
    agent-0/                  save_pretrained (model or LoRA adapter) + tokenizer, and
                              optimizer.pt when ``save_optimizer`` (twice the weights' size)
    agent-1/ …
    extra.pt                  trainer-specific modules (critics), when any

A checkpoint is written into a hidden staging directory and renamed into place, so a crash
never leaves a half-written ``step-*`` directory behind. A checkpoint without
``optimizer.pt`` resumes with a fresh optimizer (logged).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.core.files import atomic_write_json
from langmarl.llm.local.weights import save_pretrained_quietly
from langmarl.magrpo.policy import Agent

STATE_FILE = "trainer_state.json"
OPTIMIZER_FILE = "optimizer.pt"

log = logging.getLogger(__name__)


def checkpoint_dir(run_dir: Path, step: int) -> Path:
    """Where the checkpoint of ``step`` lives."""
    return run_dir / "checkpoints" / f"step-{step:06d}"


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The complete checkpoint with the highest step, or None."""
    root = run_dir / "checkpoints"
    if not root.is_dir():
        return None
    done = sorted(p for p in root.glob("step-*") if (p / STATE_FILE).is_file())
    return done[-1] if done else None


def latest_step(run_dir: Path) -> int | None:
    """The step of :func:`latest_checkpoint` (None if there is none)."""
    path = latest_checkpoint(run_dir)
    return None if path is None else int(path.name.removeprefix("step-"))


def save_checkpoint(
    target: Path,
    agents: Sequence[Agent],
    state: dict[str, Any],
    extra: dict[str, Any] | None,
    *,
    optimizer: bool = True,
) -> Path:
    """Write every agent (with its optimizer state if ``optimizer``), the trainer state and
    ``extra`` (a torch-saveable dict) to ``target``."""
    import torch

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    remote = [a.worker.save(staging / a.name, optimizer) for a in agents if a.worker is not None]
    for agent in agents:
        if agent.worker is None:
            save_agent(agent, staging / agent.name, optimizer)
    for pending in remote:  # agents on Ray write their folders at once (shared storage)
        pending.result()
    if extra:
        torch.save(extra, staging / "extra.pt")
    atomic_write_json(staging / STATE_FILE, state)
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)
    return target


def save_agent(agent: Agent, folder: Path, optimizer: bool) -> None:
    """Write one agent (``save_pretrained``) into ``folder``, its optimizer if asked."""
    import torch

    save_pretrained_quietly(agent.model, agent.tokenizer, folder)
    if optimizer:
        torch.save(agent.optimizer.state_dict(), folder / OPTIMIZER_FILE)


def keep_newest(run_dir: Path, limit: int) -> list[Path]:
    """Delete all but the newest ``limit`` complete checkpoints of ``run_dir``
    (``save_total_limit``); returns the deleted directories."""
    root = run_dir / "checkpoints"
    done = sorted(p for p in root.glob("step-*") if (p / STATE_FILE).is_file())
    dropped = done[: max(len(done) - limit, 0)]
    for path in dropped:
        shutil.rmtree(path, ignore_errors=True)
    return dropped


def resolve_checkpoint(run_dir: Path, resume_from: str | Path) -> Path:
    """``"latest"`` → newest checkpoint of the run; otherwise the given directory.

    Raises:
        ConfigError: if there is no such checkpoint.
    """
    path = latest_checkpoint(run_dir) if str(resume_from) == "latest" else Path(resume_from)
    if path is None or not (path / STATE_FILE).is_file():
        raise ConfigError(
            f"no checkpoint to resume from at {resume_from!r} (run dir {str(run_dir)!r}): "
            "pass a checkpoints/step-* directory or train without resume_from"
        )
    return path


def load_checkpoint(
    path: Path, agents: Sequence[Agent], *, optimizer: bool = True
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Load weights and, if ``optimizer``, optimizer state into ``agents``; return
    ``(trainer_state, extra)``.

    An agent saved without ``optimizer.pt`` keeps its fresh optimizer (logged at INFO, when
    ``optimizer``: agents loaded only to be scored leave their optimizers alone, silently).
    """
    import torch

    remote = []
    for agent in agents:
        folder = path / agent.name
        if not folder.is_dir():
            raise ConfigError(
                f"checkpoint {str(path)!r} has no {agent.name}/: it was written with fewer "
                "agents; resume with the same num_agents"
            )
        if agent.worker is not None:  # an agent on Ray loads on its own node
            remote.append(agent.worker.load(folder, optimizer, path.name))
        else:
            load_agent(agent, folder, optimizer, path.name)
    for pending in remote:
        pending.result()
    extra_file = path / "extra.pt"
    extra = torch.load(extra_file, weights_only=False) if extra_file.is_file() else {}
    state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    return state, extra


def load_agent(agent: Agent, folder: Path, optimizer: bool, checkpoint_name: str) -> None:
    """Load one agent's weights from ``folder`` and, if ``optimizer``, its optimizer state
    (a folder without ``optimizer.pt`` leaves the fresh optimizer, logged)."""
    import torch

    load_weights(agent.model, folder, agent.uses_lora, agent.device, agent.name)
    agent.sampler.weights_changed()
    if not optimizer:
        return
    optimizer_file = folder / OPTIMIZER_FILE
    if optimizer_file.is_file():
        agent.optimizer.load_state_dict(torch.load(optimizer_file, weights_only=False))
    else:
        log.info(
            "%s: %s holds no optimizer state (saved with save_optimizer=false): its "
            "optimizer restarts from zero moments",
            agent.name,
            checkpoint_name,
        )


def load_weights(model: Any, folder: Path, lora: bool, device: Any, name: str = "model") -> None:
    """Load what ``model.save_pretrained(folder)`` wrote back into ``model``: the adapter
    (``lora``) or every weight.

    Raises:
        ConfigError: if the folder holds no such weights, or they do not fit the model.
    """
    from safetensors.torch import load_file

    if lora:
        from peft import set_peft_model_state_dict

        adapter = folder / "adapter_model.safetensors"
        if not adapter.is_file():
            raise ConfigError(f"{str(folder)!r} holds no adapter_model.safetensors: not a LoRA "
                              "checkpoint; resume with the same lora setting")  # fmt: skip
        set_peft_model_state_dict(model, load_file(str(adapter), device=str(device)))
        return
    files = sorted(folder.glob("model*.safetensors"))
    if not files:
        raise ConfigError(
            f"{str(folder)!r} holds no model*.safetensors: not a full-model checkpoint"
        )
    state: dict[str, Any] = {}
    for file in files:
        state.update(load_file(str(file), device=str(device)))
    result = model.load_state_dict(state, strict=False)
    if result.unexpected_keys:
        raise ConfigError(
            f"{name}: checkpoint weights do not fit the model "
            f"(unexpected {result.unexpected_keys[:3]}): resume with the same model"
        )
