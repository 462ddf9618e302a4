"""Language-space PARL: the orchestrator's prompt optimized by ``MonteCarloTrainer``."""

from __future__ import annotations

from typing import Any

from langmarl.parl.callbacks import PARLCallback
from langmarl.parl.config import ParallelTasksConfig
from langmarl.store import LocalStore
from langmarl.trainer.callbacks import Callback, CheckpointCallback, LoggingCallback
from langmarl.trainer.monte_carlo import MonteCarloTrainer


def build_parl_trainer(
    config: ParallelTasksConfig,
    *,
    run_id: str | None = None,
    store: LocalStore | None = None,
    callbacks: list[Callback] | None = None,
) -> MonteCarloTrainer:
    """A ``MonteCarloTrainer`` for ``parallel_tasks`` with λ annealed over iterations and
    the curves recorded (:class:`PARLCallback` is added to ``callbacks``).

    The components are the ones ``langmarl.api.build_trainer`` builds for ``config``.
    """
    from langmarl.api import build_trainer

    base: list[Callback] = [LoggingCallback(), CheckpointCallback()]
    trainer = build_trainer(config, run_id=run_id, store=store, callbacks=callbacks or base)
    trainer.callbacks.append(PARLCallback(trainer.env))  # type: ignore[arg-type]
    return trainer


def train_parl_language(config: ParallelTasksConfig, **kwargs: Any) -> list[dict[str, Any]]:
    """Build with :func:`build_parl_trainer` and train; returns the iteration statistics."""
    return build_parl_trainer(config, **kwargs).train()
