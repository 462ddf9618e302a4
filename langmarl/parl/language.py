"""Language-space PARL: the orchestrator's prompt optimized by ``MonteCarloTrainer``."""

from __future__ import annotations

from typing import Any

from langmarl.parl.config import ParallelTasksConfig
from langmarl.store import LocalStore
from langmarl.trainer.assembly import assemble_trainer
from langmarl.trainer.callbacks import Callback
from langmarl.trainer.monte_carlo import MonteCarloTrainer


def build_parl_trainer(
    config: ParallelTasksConfig,
    *,
    run_id: str | None = None,
    store: LocalStore | None = None,
    callbacks: list[Callback] | None = None,
) -> MonteCarloTrainer:
    """A ``MonteCarloTrainer`` for ``parallel_tasks``, assembled as ``langmarl.build_trainer``
    assembles every run: the env's registered training hooks add a
    :class:`~langmarl.parl.callbacks.PARLCallback` (λ annealed over iterations, curves
    recorded) after ``callbacks``."""
    return assemble_trainer(config, run_id=run_id, store=store, callbacks=callbacks)


def train_parl_language(config: ParallelTasksConfig, **kwargs: Any) -> list[dict[str, Any]]:
    """Build with :func:`build_parl_trainer` and train; returns the iteration statistics."""
    return build_parl_trainer(config, **kwargs).train()
