"""Training callbacks: hooks the trainer calls at fixed points of every iteration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmarl.core.files import atomic_write_text
from langmarl.core.records import Trajectory

if TYPE_CHECKING:
    from langmarl.trainer.monte_carlo import MonteCarloTrainer

PHASES = ("load", "generate", "evaluate", "update", "validate", "checkpoint")
"""The phases of an iteration, in order (``validate`` is the second half of the update:
choosing which candidate policies to keep, see :mod:`langmarl.trainer.validation`)."""


class Callback:
    """Base class of training callbacks; override any hook (all default to doing nothing).

    The reference's four hooks are ``on_iteration_start``, ``on_iteration_end``,
    ``on_episode_complete`` and ``on_policy_update``; the trainer calls every one of them.
    ``on_train_start``/``on_train_end`` and the phase hooks (used by the CLI's progress
    display) are additions.
    """

    def on_train_start(self, trainer: MonteCarloTrainer) -> None:
        """Before the first iteration of ``train`` (also when resuming)."""

    def on_train_end(self, status: str, trainer: MonteCarloTrainer) -> None:
        """After ``train`` ends; ``status`` is ``completed``, ``stopped`` or ``failed``."""

    def on_iteration_start(self, iteration: int, trainer: MonteCarloTrainer) -> None:
        """Before phase 1 of ``iteration``."""

    def on_iteration_end(
        self, iteration: int, stats: dict[str, Any], trainer: MonteCarloTrainer
    ) -> None:
        """After the checkpoint of ``iteration`` is saved."""

    def on_episode_complete(self, trajectory: Trajectory, trainer: MonteCarloTrainer) -> None:
        """After each episode of phase 2 is saved (also for episodes reused on resume)."""

    def on_policy_update(self, agent_id: str, old_policy: str, new_policy: str) -> None:
        """After an agent's policy changed in phase 4."""

    def on_phase_start(self, iteration: int, phase: str, total: int) -> None:
        """A phase (one of :data:`PHASES`) starts with ``total`` units of work."""

    def on_phase_advance(self, iteration: int, phase: str) -> None:
        """One unit of work of ``phase`` is done."""


class LoggingCallback(Callback):
    """Logs iteration start and end through the trainer's :class:`RunLogger`."""

    def on_iteration_start(self, iteration: int, trainer: MonteCarloTrainer) -> None:
        trainer.logger.iteration_start(iteration, trainer.current_policies)

    def on_iteration_end(
        self, iteration: int, stats: dict[str, Any], trainer: MonteCarloTrainer
    ) -> None:
        trainer.logger.iteration_end(iteration, stats)


EXPORT_DIR = "exported"
"""Where a run's newest policies are exported inside it when no ``checkpoint_dir`` is set."""


class CheckpointCallback(Callback):
    """Checkpoints are saved by the trainer (in the run directory) in any case; this
    callback also exports the newest policies as ``<agent>.txt`` after every iteration: to
    ``<checkpoint_dir>/<run_id>/`` (the reference's ``checkpoint_dir``), or to
    ``<run dir>/exported/`` when none is set.

    Args:
        checkpoint_dir: Export folder (default: the config's ``checkpoint_dir``).
    """

    def __init__(self, checkpoint_dir: str | Path | None = None) -> None:
        self.checkpoint_dir = checkpoint_dir

    def on_iteration_end(
        self, iteration: int, stats: dict[str, Any], trainer: MonteCarloTrainer
    ) -> None:
        chosen = self.checkpoint_dir or trainer.config.checkpoint_dir
        run = trainer.store.run_dir(trainer.run_id)
        folder = Path(chosen) / trainer.run_id if chosen else run / EXPORT_DIR
        for agent_id, policy in trainer.checkpoint.get_policies().items():
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", agent_id) or "agent"
            atomic_write_text(folder / f"{name}.txt", trainer.store.redact(policy))


class EarlyStoppingCallback(Callback):
    """Stops training when the average reward stops improving.

    After ``patience`` iterations in a row without an ``avg_reward`` better than the best
    so far by more than ``min_delta``, the trainer stops and the run's status is
    ``stopped``. When resuming, the history is read back from the run's metrics.

    Args:
        patience: Iterations without improvement to wait.
        min_delta: Least improvement that counts as progress.
    """

    def __init__(self, patience: int = 3, min_delta: float = 0.01) -> None:
        self.patience = patience
        self.min_delta = min_delta
        self.best: float | None = None
        self.waited = 0

    def _observe(self, reward: float) -> None:
        if self.best is None or reward > self.best + self.min_delta:
            self.best = reward
            self.waited = 0
        else:
            self.waited += 1

    def on_train_start(self, trainer: MonteCarloTrainer) -> None:
        self.best, self.waited = None, 0
        for stats in trainer.store.load_metrics(trainer.run_id):
            self._observe(float(stats.get("avg_reward", 0.0)))

    def on_iteration_end(
        self, iteration: int, stats: dict[str, Any], trainer: MonteCarloTrainer
    ) -> None:
        self._observe(float(stats.get("avg_reward", 0.0)))
        if self.waited >= self.patience:
            trainer.stop(
                f"early stopping: no improvement over {self.best:.3f} by more than "
                f"{self.min_delta} for {self.waited} iterations"
            )
