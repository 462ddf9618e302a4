"""`langmarl config show`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add the config commands to ``app``."""
    group = typer.Typer(help="Inspect configuration files.", no_args_is_help=True)
    app.add_typer(group, name="config")
