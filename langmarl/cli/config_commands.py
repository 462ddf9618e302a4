"""`langmarl config show`: any config file, resolved the way its command loads it.

Four kinds of config file exist, one per loader; the kind is read from the file's keys:

- ``parl_grpo`` (``langmarl parl grpo``): sections ``env`` and ``grpo``;
- ``magrpo`` (``langmarl magrpo train``): a run file with ``algorithm``/``task``/``models``/
  ``trainer``;
- ``p2p`` (``langmarl p2p run``): a session's ``LoopConfig`` (``env_id``, ``max_iterations``…);
- ``env`` (``langmarl train``, ``parl train``): everything else, validated by the config class
  the environment registry names for its ``env`` (``language`` when absent).

A string ``env`` always means the last kind, and ``--kind`` overrides the guess.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from langmarl.cli.common import SET_OPTION_HELP, console, parse_overrides
from langmarl.cli.config_kinds import ConfigKind, config_kind

__all__ = ["ConfigKind", "config_kind", "register", "show"]


def register(app: typer.Typer) -> None:
    """Add the config commands to ``app``."""
    group = typer.Typer(help="Inspect configuration files.", no_args_is_help=True)
    group.command("show")(show)
    app.add_typer(group, name="config")


def show(
    config: Path = typer.Argument(..., help="Config file (JSON or YAML) of any command."),
    set_: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
    kind: str | None = typer.Option(
        None, "--kind", help="env, magrpo, parl_grpo or p2p (default: read from the keys)."
    ),
) -> None:
    """Print the resolved config: defaults filled in, LLM fallbacks resolved, secrets masked."""
    from langmarl.config.loading import read_mapping
    from langmarl.core.errors import ConfigError
    from langmarl.core.validation import did_you_mean

    overrides = parse_overrides(set_)
    chosen = kind or config_kind(read_mapping(config))
    if chosen not in RESOLVERS:
        hint = did_you_mean(chosen, RESOLVERS)
        raise ConfigError(f"unknown --kind {chosen!r}.{hint} Kinds: {', '.join(RESOLVERS)}")
    console.print_json(json.dumps({"kind": chosen, **RESOLVERS[chosen](config, overrides)}))


def _env_config(path: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    from langmarl.config.loading import load_config

    resolved = load_config(path, overrides)
    data = resolved.model_dump(mode="json")
    for role, getter in (
        ("actor_llm", resolved.get_actor_llm),
        ("critic_llm", resolved.get_critic_llm),
        ("optimizer_llm", resolved.get_optimizer_llm),
    ):
        llm = getter()
        data[role] = llm.to_dict() | {"api_key": "***" if llm.api_key else None}
    return data


def _magrpo_run(path: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    from langmarl.magrpo.run import load_run_config

    run = load_run_config(path, overrides)
    return run.model_dump(mode="json") | {"trainer": run.trainer_config().model_dump(mode="json")}


def _parl_grpo(path: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    from langmarl.cli.parl_commands import read_grpo_sections
    from langmarl.parl.grpo_config import GRPOFile

    loaded = GRPOFile.from_mapping(read_grpo_sections(path, overrides), str(path))
    return loaded.model_dump(mode="json") | {"grpo": loaded.grpo_config().model_dump(mode="json")}


def _p2p_loop(path: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    from langmarl.cli.p2p_commands import loop_config

    config = loop_config(None, None, None, overrides, path)
    return config.model_dump(mode="json") | {"train": config.train_config().model_dump()}


RESOLVERS: dict[str, Callable[[Path, dict[str, Any]], dict[str, Any]]] = {
    "env": _env_config,
    "magrpo": _magrpo_run,
    "parl_grpo": _parl_grpo,
    "p2p": _p2p_loop,
}
"""Config kind → the resolved config as JSON data, loaded as its command loads it."""
