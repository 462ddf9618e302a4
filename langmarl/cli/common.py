"""Helpers shared by the CLI modules: logging, error display, overrides, the console."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from langmarl.core.errors import ConfigError, LangmarlError

console = Console()
err_console = Console(stderr=True)


HTTP_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "urllib3")
"""Libraries that log every request at INFO ("HTTP Request: POST ..."; openai 3 sends its
requests through httpx2): shown only with -v."""


def setup_logging(verbose: bool) -> None:
    """Log INFO (DEBUG with ``-v``) to stderr, HTTP libraries only from WARNING unless
    ``-v``, and scrub the environment's secrets from every line a root handler prints
    (a run adds its LLM keys while it runs, see :func:`langmarl.core.secrets.redacting_logs`).
    """
    from langmarl.core.secrets import Redactor, environment_secrets, install_log_redaction

    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for name in HTTP_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)
    install_log_redaction(Redactor(environment_secrets()))


def run_app(app: typer.Typer) -> None:
    """Run ``app``; a ``LangmarlError`` becomes one red line (secrets scrubbed, not wrapped
    at the terminal width) and exit code 1, no traceback."""
    from rich.markup import escape

    from langmarl.core.secrets import Redactor, environment_secrets

    try:
        app()
    except LangmarlError as exc:
        message = escape(Redactor(environment_secrets())(str(exc)))
        err_console.print(
            f"[bold red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True
        )
        raise SystemExit(1) from None


def parse_overrides(assignments: list[str] | None) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` → ``{"a.b": 1, "c": "x"}`` (values read as YAML scalars)."""
    from langmarl.config.loading import parse_assignment

    return dict(parse_assignment(item) for item in assignments or [])


SET_OPTION_HELP = "Override a config value: --set key=value (dotted keys, repeatable)."

CONFIG_ALIAS = typer.Option(None, "--config", help="The config file (same as CONFIG).")
"""``--config FILE``: where a command took its config as an option before CONFIG was
positional, kept so old command lines still work."""


def config_argument(positional: Path | None, option: Path | None) -> Path | None:
    """The config file given as CONFIG or as ``--config`` (they must not disagree).

    Raises:
        ConfigError: if both are given and name different files.
    """
    if positional is not None and option is not None and positional != option:
        raise ConfigError(
            f"two config files given: {str(positional)!r} and --config {str(option)!r}; "
            "pass one (CONFIG, or --config for old command lines)"
        )
    return positional if positional is not None else option
