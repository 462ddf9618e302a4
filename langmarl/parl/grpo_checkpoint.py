"""Checkpoints of weight-space PARL (:class:`~langmarl.parl.grpo.OrchestratorGRPO`).

Layout of ``<output_dir>/checkpoints/step-000004/`` (the state after 4 finished steps)::

    model/                  save_pretrained of the orchestrator (the adapter only with LoRA)
    optimizer.pt            AdamW state
    rng.pt                  torch and task-sampling RNG states, so a resumed run draws on
    trainer_state.json      written last: {"step": 4, "lora": bool}

A checkpoint is staged in a hidden directory and renamed into place, and only the newest is
kept, so a kill leaves the previous complete checkpoint.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.core.files import atomic_write_json
from langmarl.store.run import staged_dir

STATE_FILE = "trainer_state.json"
MODEL_DIR = "model"


def checkpoint_dir(output_dir: Path, step: int) -> Path:
    return output_dir / "checkpoints" / f"step-{step:06d}"


def latest_checkpoint(output_dir: Path) -> Path | None:
    """The complete checkpoint with the most steps, or None."""
    root = output_dir / "checkpoints"
    done = sorted(p for p in root.glob("step-*") if (p / STATE_FILE).is_file())
    return done[-1] if done else None


def save_checkpoint(
    output_dir: Path, step: int, model: Any, tokenizer: Any, optimizer: Any, rng: random.Random
) -> Path:
    """Write the state after ``step`` finished steps; drop older checkpoints."""
    import torch

    target = checkpoint_dir(output_dir, step)
    with staged_dir(target) as staging:
        model.save_pretrained(staging / MODEL_DIR)
        tokenizer.save_pretrained(staging / MODEL_DIR)
        torch.save(optimizer.state_dict(), staging / "optimizer.pt")
        torch.save({"torch": torch.get_rng_state(), "tasks": rng.getstate()}, staging / "rng.pt")
        lora = hasattr(model, "peft_config")
        atomic_write_json(staging / STATE_FILE, {"step": step, "lora": lora})
    for older in target.parent.glob("step-*"):
        if older != target:
            shutil.rmtree(older, ignore_errors=True)
    return target


def resolve_checkpoint(output_dir: Path, resume_from: str | Path) -> Path:
    """``"latest"`` → the newest checkpoint in ``output_dir``; otherwise the directory given.

    Raises:
        ConfigError: if there is no such checkpoint.
    """
    latest = str(resume_from) == "latest"
    path = latest_checkpoint(output_dir) if latest else Path(resume_from)
    if path is None or not (path / STATE_FILE).is_file():
        raise ConfigError(
            f"no checkpoint to resume from at {str(resume_from)!r} (output_dir "
            f"{str(output_dir)!r}): pass a checkpoints/step-* directory, or start without "
            "--resume in a new output_dir"
        )
    return path


def load_checkpoint(path: Path, model: Any, optimizer: Any, rng: random.Random) -> int:
    """Restore the weights (or adapter), optimizer and RNG states; return the step count.

    Raises:
        ConfigError: if the checkpoint was written with or without LoRA and the model differs.
    """
    import torch

    from langmarl.magrpo.checkpoint import load_weights

    state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    lora = hasattr(model, "peft_config")
    if bool(state.get("lora")) != lora:
        raise ConfigError(
            f"checkpoint {str(path)!r} was written {'with' if state.get('lora') else 'without'} "
            "LoRA: resume with the same grpo.lora setting"
        )
    device = next(model.parameters()).device
    load_weights(model, path / MODEL_DIR, lora, device, "orchestrator")
    optimizer.load_state_dict(torch.load(path / "optimizer.pt", weights_only=False))
    states = torch.load(path / "rng.pt", weights_only=False)
    torch.set_rng_state(states["torch"])
    rng.setstate(states["tasks"])
    return int(state["step"])
