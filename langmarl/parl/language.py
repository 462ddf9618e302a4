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
    recorded) after ``callbacks``. ``run_id`` (default: ``config.run_id``, else its
    ``exp_name``) names the run directory inside ``config.runs_dir``."""
    return assemble_trainer(config, run_id=run_id, store=store, callbacks=callbacks)


def train_parl_language(config: ParallelTasksConfig, **kwargs: Any) -> list[dict[str, Any]]:
    """Build with :func:`build_parl_trainer` and train; returns the iteration statistics."""
    return build_parl_trainer(config, **kwargs).train()


def validate_config(data: dict[str, Any], source: str = "the config") -> None:
    """Check a ``parl_language`` run's config as ``langmarl parl train`` would.

    Raises:
        ConfigError: naming the invalid field and the fix, or an env other than
            ``parallel_tasks``.
    """
    from langmarl.config.loading import config_from_dict
    from langmarl.core.errors import ConfigError

    config_from_dict(data, source=source)
    if data.get("env") != "parallel_tasks":
        raise ConfigError(
            f"a parl_language run needs env='parallel_tasks', not {data.get('env')!r}: use "
            "kind 'language' for other environments"
        )
