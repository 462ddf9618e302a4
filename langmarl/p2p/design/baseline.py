"""The baseline of a session with a check (``LoopConfig.baseline``): the environment's own
reward terms (the fallback template), trained at the session's budget, configs and seeds,
and scored by the check. It is what a user gets without reward design, and the first figure
of the session's last line ("Intent score: <env reward> → <best>")."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from langmarl.p2p.agents.author import fallback_reward
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.reward.env_specs import MujocoEnvSpec
from langmarl.p2p.session.contracts import CheckResult
from langmarl.p2p.session.records import IterationRecord

if TYPE_CHECKING:  # the session passes its trainer in
    from langmarl.p2p.session.trainers import Trainer

BASELINE_DIR = "baseline"
"""The baseline's directory in the session (not an ``iter_N``: no iteration of the loop)."""
Score = Callable[[IterationRecord, Path | None], CheckResult]
"""``score(record, trajectory)``: the session's check on the run's episodes."""


def train_baseline(
    record: IterationRecord,
    spec: MujocoEnvSpec,
    train: Trainer,
    configs: list[TrainConfig],
    seeds: list[int],
    score: Score,
) -> CheckResult:
    """Train the env's own reward into ``record`` (emptied first: a killed attempt starts
    over) and score the judged run; a training failure is the result's reason."""
    shutil.rmtree(record.path, ignore_errors=True)
    record.path.mkdir(parents=True)
    record.save_reward_source(fallback_reward(spec))
    aggregation = train(record, record.reward_fn_path, configs, seeds)
    if not aggregation.runs:
        errors = "; ".join(f"{k}: {v}" for k, v in aggregation.errors.items()) or "no runs"
        return CheckResult(reason=f"training the environment's own reward failed: {errors}")
    return score(record, record.judged_run(aggregation).trajectory_path)
