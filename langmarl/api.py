"""One-line training: ``langmarl.train(config_path, **overrides)``, and its building blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmarl.config.base import BaseConfig
from langmarl.config.loading import load_config
from langmarl.store import LocalStore
from langmarl.trainer.assembly import assemble_trainer
from langmarl.trainer.callbacks import Callback
from langmarl.trainer.monte_carlo import MonteCarloTrainer


def build_trainer(
    config: BaseConfig,
    *,
    run_id: str | None = None,
    callbacks: list[Callback] | None = None,
    store: LocalStore | None = None,
) -> MonteCarloTrainer:
    """The environment, critic, optimizer and trainer for ``config``, sharing one usage
    ledger (roles ``actor``, ``critic``, ``optimizer``, ``judge``), assembled as every entry
    point assembles a run (:mod:`langmarl.trainer.assembly`).

    Args:
        config: The run config.
        run_id: Run directory name (default: ``config.chosen_run_id()``, i.e. its
            ``run_id``, else ``exp_name``; the same id resumes).
        callbacks: Trainer callbacks (default: logging + checkpoint export). The
            environment's training hooks (e.g. λ annealing on ``parallel_tasks``) are
            always added.
        store: Where runs live (default ``LocalStore(config.runs_dir)``).
    """
    return assemble_trainer(config, run_id=run_id, callbacks=callbacks, store=store)


def train(config_path: str | Path, **overrides: Any) -> list[dict[str, Any]]:
    """Load a config, build every component and train (resuming the run if it exists).

    Args:
        config_path: A JSON (or YAML) config file.
        **overrides: Config values to change, e.g. ``num_iterations=10``; dotted keys such
            as ``**{"llm.max_tokens": 64}`` reach nested fields. ``run_id=...`` names the
            run directory inside ``runs_dir`` (default: the config's ``exp_name``).

    Returns:
        The statistics of every finished iteration of the run.

    Example:
        >>> langmarl.train("configs/quickstart.json", num_iterations=1)  # doctest: +SKIP
    """
    return build_trainer(load_config(config_path, overrides)).train()
