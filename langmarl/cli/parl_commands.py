"""`langmarl parl train|grpo|curves`: PARL training of an orchestrator from the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from langmarl.cli.common import SET_OPTION_HELP, console, parse_overrides


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
    run_id: str = typer.Option(None, help="Run directory name (default: exp_name)."),
) -> None:
    """Language space: optimize the orchestrator's prompt, λ annealed per iteration."""
    from langmarl.config.loading import load_config
    from langmarl.core.errors import ConfigError
    from langmarl.parl.config import ParallelTasksConfig
    from langmarl.parl.curves import CURVES_FILE
    from langmarl.parl.language import build_parl_trainer

    loaded = load_config(config, parse_overrides(overrides))
    if not isinstance(loaded, ParallelTasksConfig):
        raise ConfigError(f"{config} has env={loaded.env!r}; `parl train` needs parallel_tasks")
    trainer = build_parl_trainer(loaded, run_id=run_id)
    trainer.train()
    _print_curve(trainer.store.read_json(trainer.run_id, CURVES_FILE, {}))
    console.print(f"run directory: {trainer.store.run_dir(trainer.run_id)}")


def grpo(
    config: Path = typer.Option(None, help='JSON: {"env": {...}, "grpo": {...}}.'),
    overrides: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
) -> None:
    """Weight space: GRPO on the orchestrator's plans, sub-agents frozen (embedded model)."""
    from langmarl.envs.parallel.env import ParallelTasksEnv
    from langmarl.llm.client import LLMClient
    from langmarl.llm.presets import get_llm_config
    from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig

    data = _read_sections(config, parse_overrides(overrides))
    env_kwargs = dict(data.get("env", {}))
    subagent = LLMClient(get_llm_config(env_kwargs.pop("subagent_llm", "local")), role="subagent")
    env = ParallelTasksEnv(subagent_llm=subagent, **env_kwargs)
    trainer = OrchestratorGRPO(env, OrchestratorGRPOConfig(**data.get("grpo", {})))
    trainer.train()
    _print_curve({"curve": trainer.metrics})
    console.print(f"curves: {Path(trainer.config.output_dir) / 'parl_curves.json'}")


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


def _read_sections(path: Path | None, overrides: dict[str, Any]) -> dict[str, Any]:
    from langmarl.config.loading import apply_overrides, read_mapping

    data = read_mapping(path) if path else {}
    return apply_overrides(data, overrides)


def _print_curve(document: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title="PARL curve")
    columns = ("step", "total_reward", "r_perf", "lambda1", "num_subagents", "critical_steps",
               "serial_steps", "speedup")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="right")
    for point in document.get("curve", []):
        table.add_row(*(_cell(point.get(column)) for column in columns))
    console.print(table)


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
