"""`langmarl dashboard`: the web dashboard and its REST API over a runs directory."""

from __future__ import annotations

from pathlib import Path

import typer

from langmarl.cli.common import console, err_console
from langmarl.core.runs_dir import DEFAULT_RUNS_DIR
from langmarl.web.defaults import DEFAULT_HOST, DEFAULT_PORT, TOKEN_ENV, VLM_ENV


def register(app: typer.Typer) -> None:
    """Add the ``dashboard`` command to ``app``."""
    app.command("dashboard")(dashboard)


def dashboard(
    runs_dir: Path = typer.Option(
        Path(DEFAULT_RUNS_DIR), "--runs-dir", help="Directory holding the runs (any kind)."
    ),
    host: str = typer.Option(
        DEFAULT_HOST, help="Address to bind; anything but loopback needs --token."
    ),
    port: int = typer.Option(DEFAULT_PORT, min=0, max=65535, help="Port (0 picks a free one)."),
    token: str | None = typer.Option(
        None,
        envvar=TOKEN_ENV,
        show_envvar=True,
        help="Require 'Authorization: Bearer TOKEN' on every /api route.",
    ),
    backend: str = typer.Option("local", help="Where /api/jobs runs jobs: local or ray."),
    address: str | None = typer.Option(None, help="The Ray cluster (ray backend only)."),
    vlm: str | None = typer.Option(
        None,
        "--vlm",
        envvar=VLM_ENV,
        show_envvar=True,
        help="The multimodal model /api/vlm forwards to: a preset or an LLM config file.",
    ),
) -> None:
    """Serve the dashboard (pages at /, API under /api, docs at /docs) over the runs directory."""
    from langmarl.core.errors import ConfigError
    from langmarl.web.security import check_bind

    try:
        check_bind(host, token)
    except ConfigError as exc:
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if not runs_dir.is_dir():
        console.print(
            f"[yellow]{runs_dir} does not exist yet: the list stays empty until runs land there[/]"
        )
    if vlm:  # the /api/vlm routes read it at each request, as a served process would
        import os

        os.environ[VLM_ENV] = vlm
    from langmarl.jobs import open_backend
    from langmarl.web.app import serve

    def announce(url: str) -> None:
        auth = " (token required)" if token else ""
        console.print(
            f"Dashboard at {url}/ (API {url}/api/runs, docs {url}/docs){auth}; Ctrl-C stops",
            highlight=False,
            soft_wrap=not console.is_terminal,  # one line in a log file, wrapped on a terminal
        )

    jobs = open_backend(backend, runs_dir, address)
    serve(runs_dir, host=host, port=port, token=token, backend=jobs, announce=announce)
