"""Helpers shared by the CLI modules: error display, overrides, the console."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console

from langmarl.core.errors import LangmarlError

console = Console()
err_console = Console(stderr=True)


def run_app(app: typer.Typer) -> None:
    """Run ``app``; a ``LangmarlError`` becomes a red message and exit code 1, no traceback."""
    try:
        app()
    except LangmarlError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", markup=True, highlight=False)
        raise SystemExit(1) from None


def parse_overrides(assignments: list[str] | None) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` → ``{"a.b": 1, "c": "x"}`` (values read as YAML scalars)."""
    from langmarl.config.loading import parse_assignment

    return dict(parse_assignment(item) for item in assignments or [])


SET_OPTION_HELP = "Override a config value: --set key=value (dotted keys, repeatable)."
