"""`langmarl parl train|grpo|curves`: PARL training of an orchestrator from the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from langmarl.cli.common import (
    CONFIG_ALIAS,
    RUNS_DIR_SET,
    SET_OPTION_HELP,
    compact_table,
    config_argument,
    console,
    parse_overrides,
    with_runs_dir,
)


def register(app: typer.Typer) -> None:
    """Add the ``parl`` command group to ``app``."""
    group = typer.Typer(help="PARL: train an orchestrator that spawns parallel sub-agents.")
    group.command("train")(train)
    group.command("grpo")(grpo)
    group.command("curves")(curves)
    app.add_typer(group, name="parl")


def train(
    config: Path = typer.Argument(..., help="A parallel_tasks config (configs/parl/*.json)."),
    overrides: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
    run_id: str | None = typer.Option(
        None, help="Run directory name (= --set run_id=ID; default: exp_name)."
    ),
    runs_dir: Path | None = RUNS_DIR_SET,
) -> None:
    """Language space: optimize the orchestrator's prompt, λ annealed per iteration."""
    from langmarl.cli.config_kinds import require_config_kind
    from langmarl.config.loading import load_config
    from langmarl.core.errors import ConfigError
    from langmarl.parl.config import ParallelTasksConfig
    from langmarl.parl.curves import CURVES_FILE
    from langmarl.parl.language import build_parl_trainer

    require_config_kind(config, "env")
    chosen = parse_overrides(overrides) | ({"run_id": run_id} if run_id is not None else {})
    loaded = load_config(config, with_runs_dir(chosen, runs_dir))
    if not isinstance(loaded, ParallelTasksConfig):
        raise ConfigError(f"{config} has env={loaded.env!r}; `parl train` needs parallel_tasks")
    trainer = build_parl_trainer(loaded)
    trainer.train()
    _print_curve(trainer.store.read_json(trainer.run_id, CURVES_FILE, {}))
    console.print(f"run directory: {trainer.store.run_dir(trainer.run_id)}")


def grpo(
    config: Path | None = typer.Argument(
        None, help='Config file: {"env": {...}, "grpo": {...}} (default: all defaults).'
    ),
    config_option: Path | None = CONFIG_ALIAS,
    overrides: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
    resume: str | None = typer.Option(
        None, "--resume", help="Continue from 'latest' or a checkpoints/step-* directory."
    ),
) -> None:
    """Weight space: GRPO on the orchestrator's plans, sub-agents frozen (embedded model)."""
    from langmarl.cli.config_kinds import require_config_kind
    from langmarl.parl.grpo import OrchestratorGRPO
    from langmarl.store.lock import RunLock

    path = config_argument(config, config_option)
    if path is not None:
        require_config_kind(path, "parl_grpo")
    env, grpo_config = build_grpo(read_grpo_sections(path, parse_overrides(overrides)))
    with RunLock(grpo_config.output_dir):  # two processes never write one run directory
        trainer = OrchestratorGRPO(env, grpo_config)
        try:
            trainer.train(resume_from=resume)
        finally:
            trainer.close()  # placement="ray": the orchestrator's actor ends with the run
    _print_curve({"curve": trainer.metrics})
    console.print(f"curves: {Path(trainer.config.output_dir) / 'parl_curves.json'}")


def build_grpo(data: dict[str, Any]) -> tuple[Any, Any]:
    """``(ParallelTasksEnv, OrchestratorGRPOConfig)`` from a config file's contents
    (:class:`~langmarl.parl.grpo_config.GRPOFile`: sections ``env`` and ``grpo``, and
    ``runs_dir``/``run_id``/``seed``). ``grpo.num_threads`` also caps the embedded engine's
    threads (``LANGMARL_TORCH_THREADS``) unless that variable is set.

    Raises:
        ConfigError: for an unknown key or an invalid value, saying which.
    """
    import os

    from langmarl.core.environment import THREADS_ENV_VAR
    from langmarl.envs.parallel.env import ParallelTasksEnv
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig
    from langmarl.llm.presets import get_llm_config
    from langmarl.parl.grpo_config import GRPOFile

    loaded = GRPOFile.from_mapping(data, "the parl grpo config")
    grpo_config = loaded.grpo_config()
    if grpo_config.num_threads and not os.environ.get(THREADS_ENV_VAR):  # empty: unset
        os.environ[THREADS_ENV_VAR] = str(grpo_config.num_threads)
    env_kwargs = dict(loaded.env)
    llm = env_kwargs.pop("subagent_llm", "local")
    llm_config = LLMConfig.from_dict(llm) if isinstance(llm, dict) else get_llm_config(str(llm))
    env = ParallelTasksEnv(subagent_llm=LLMClient(llm_config, role="subagent"), **env_kwargs)
    return env, grpo_config


def curves(
    path: Path = typer.Argument(..., help="parl_curves.json or the folder holding it."),
) -> None:
    """Print a recorded reward / critical-step curve."""
    from langmarl.core.errors import ConfigError
    from langmarl.parl.curves import CURVES_FILE

    file = path / CURVES_FILE if path.is_dir() else path
    if not file.exists():
        raise ConfigError(f"no {CURVES_FILE} at {str(path)!r}; pass a run directory or the file")
    _print_curve(json.loads(file.read_text(encoding="utf-8")))


def read_grpo_sections(path: Path | None, overrides: dict[str, Any]) -> dict[str, Any]:
    """A ``parl grpo`` config file's sections (none without a file), ``overrides`` applied."""
    from langmarl.config.loading import apply_overrides, read_mapping

    data = read_mapping(path) if path else {}
    return apply_overrides(data, overrides)


def _print_curve(document: dict[str, Any]) -> None:
    table = compact_table(*CURVE_COLUMNS.values(), title="PARL curve")
    table.caption = "r: total reward; λ1: lambda1; crit./serial: critical and serial steps"
    for point in document.get("curve", []):
        table.add_row(*(_cell(point.get(column)) for column in CURVE_COLUMNS))
    console.print(table)


CURVE_COLUMNS = {"step": "step", "total_reward": "r", "r_perf": "r_perf", "lambda1": "λ1",
                 "num_subagents": "agents", "critical_steps": "crit.",
                 "serial_steps": "serial", "speedup": "speedup"}  # fmt: skip
"""Field of a curve point → its short column header (the table fits 80 columns)."""


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
