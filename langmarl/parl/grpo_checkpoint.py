"""Runs of weight-space PARL in earlier layouts, read so that such a run still resumes.

Two changes are undone here. Before it ran on the shared weight-space loop, PARL GRPO wrote
its own checkpoints (below; new checkpoints use :mod:`langmarl.magrpo.checkpoint`, the
orchestrator as ``agent-0/``). Until it numbered its steps from 1 like every weight-space
trainer, it numbered them from 0 in ``metrics.jsonl`` and ``parl_curves.json`` and also kept
every metrics line as one list in ``metrics.json`` (:func:`renumber_from_zero`; checkpoint
names, ``run.json`` and events counted finished steps all along).

Layout of ``<output_dir>/checkpoints/step-000004/`` (the state after 4 finished steps)::

    model/                  save_pretrained of the orchestrator (the adapter only with LoRA)
    optimizer.pt            AdamW state
    rng.pt                  torch and task-sampling RNG states (not read: the loop now seeds
                            each step and draws tasks from a seeded shuffle per epoch)
    trainer_state.json      {"step": 4, "lora": bool}
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from langmarl.core.errors import ConfigError
from langmarl.core.files import load_json_file
from langmarl.magrpo.checkpoint import STATE_FILE, load_weights
from langmarl.magrpo.policy import Agent
from langmarl.parl.curves import CURVES_FILE, curves_document
from langmarl.store.run import METRICS_FILE, RunDir

log = logging.getLogger(__name__)
MODEL_DIR = "model"
LEGACY_METRICS_FILE = "metrics.json"
"""Every metrics line as one JSON list, written until steps were numbered from 1."""


def renumber_from_zero(run: RunDir) -> bool:
    """Bring a run that numbered its steps from 0 up to date: every ``step`` of
    ``metrics.jsonl`` (or, if it has none, of ``metrics.json``) and ``parl_curves.json`` one
    higher, and ``metrics.json`` removed (it would go stale). A run numbered from 1 has no
    step 0 and is left as it is; returns whether ``run`` was renumbered."""
    curves, listed = run.file(CURVES_FILE), run.file(LEGACY_METRICS_FILE)
    rows = load_json_file(curves).get("episodes", []) if curves.is_file() else []
    metrics = run.metrics() or (load_json_file(listed) if listed.is_file() else [])
    if not any(int(row["step"]) == 0 for row in [*rows, *metrics]):
        return False
    lines = [{**line, "step": int(line["step"]) + 1} for line in metrics]
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    run.write_text(METRICS_FILE, text)
    if curves.is_file():
        rows = [{**row, "step": int(row["step"]) + 1} for row in rows]
        run.write_json(CURVES_FILE, curves_document(rows))
    listed.unlink(missing_ok=True)
    log.info("%s numbered its steps from 0: renumbered from 1", run.path)
    return True


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
