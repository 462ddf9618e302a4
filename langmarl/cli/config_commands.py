"""`langmarl config show`."""

from __future__ import annotations

import json

import typer

from langmarl.cli.common import SET_OPTION_HELP, console, parse_overrides


def register(app: typer.Typer) -> None:
    """Add the config commands to ``app``."""
    group = typer.Typer(help="Inspect configuration files.", no_args_is_help=True)
    group.command("show")(show)
    app.add_typer(group, name="config")


def show(
    config: str = typer.Argument(..., help="Config file (JSON or YAML)."),
    set_: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
) -> None:
    """Print the resolved config: defaults filled in, LLM fallbacks resolved, secrets masked."""
    from langmarl.config.loading import load_config

    resolved = load_config(config, parse_overrides(set_))
    data = resolved.model_dump(mode="json")
    for role, getter in (
        ("actor_llm", resolved.get_actor_llm),
        ("critic_llm", resolved.get_critic_llm),
        ("optimizer_llm", resolved.get_optimizer_llm),
    ):
        llm = getter()
        data[role] = llm.to_dict() | {"api_key": "***" if llm.api_key else None}
    console.print_json(json.dumps(data))
