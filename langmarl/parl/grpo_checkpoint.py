"""Checkpoints of weight-space PARL in the layout before it ran on the shared weight-space
loop, read so that such a run still resumes (new checkpoints use
:mod:`langmarl.magrpo.checkpoint`, the orchestrator as ``agent-0/``).

Layout of ``<output_dir>/checkpoints/step-000004/`` (the state after 4 finished steps)::

    model/                  save_pretrained of the orchestrator (the adapter only with LoRA)
    optimizer.pt            AdamW state
    rng.pt                  torch and task-sampling RNG states (not read: the loop now seeds
                            each step and draws tasks from a seeded shuffle per epoch)
    trainer_state.json      {"step": 4, "lora": bool}
"""

from __future__ import annotations

import json
from pathlib import Path

from langmarl.core.errors import ConfigError
from langmarl.magrpo.checkpoint import STATE_FILE, load_weights
from langmarl.magrpo.policy import Agent

MODEL_DIR = "model"


def is_legacy_checkpoint(path: Path) -> bool:
    """Whether ``path`` is a checkpoint of the earlier layout (a ``model/`` folder, no
    trainer named in its state)."""
    state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    return "algorithm" not in state and (path / MODEL_DIR).is_dir()


def load_legacy_checkpoint(path: Path, agent: Agent) -> int:
    """Restore the orchestrator's weights (or adapter) and optimizer; return the step count.

    Raises:
        ConfigError: if the checkpoint was written with or without LoRA and the agent differs.
    """
    import torch

    state = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    if bool(state.get("lora")) != agent.uses_lora:
        raise ConfigError(
            f"checkpoint {str(path)!r} was written {'with' if state.get('lora') else 'without'} "
            "LoRA: resume with the same grpo.lora setting"
        )
    load_weights(agent.model, path / MODEL_DIR, agent.uses_lora, agent.device, "orchestrator")
    agent.optimizer.load_state_dict(torch.load(path / "optimizer.pt", weights_only=False))
    return int(state["step"])
