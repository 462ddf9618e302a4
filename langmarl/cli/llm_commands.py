"""`langmarl models`, `langmarl chat`, `langmarl serve`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the LLM commands to ``app``."""
    app.command("models")(models)


def models() -> None:
    """List the LLM presets and the embedded model's status."""
    from langmarl.llm.presets import list_available_models

    for name, description in list_available_models().items():
        typer.echo(f"{name:28} {description}")
