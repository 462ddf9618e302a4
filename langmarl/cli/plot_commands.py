"""`langmarl plot RUN`: a PNG of a run's curves, for every space."""

from __future__ import annotations

from pathlib import Path

import typer

from langmarl.cli.common import OLD_DIR, RUNS_DIR_HELP, given_runs_dir, runs_dir_given


def register(app: typer.Typer) -> None:
    """Add the ``plot`` command to ``app``."""
    app.command("plot")(plot)


def plot(
    run: str = typer.Argument(..., help="A run directory, or a run id under --runs-dir."),
    output: Path = typer.Option(
        None, "--output", "-o", help="PNG to write (default: RUN/curves.png)."
    ),
    runs_dir: Path | None = typer.Option(None, "--runs-dir", help=RUNS_DIR_HELP),
    old_dir: Path | None = OLD_DIR,
) -> None:
    """Plot a run's curves into one PNG and print its path.

    Reward, evaluations and the space's own series; the kind of run (language, weight,
    PARL GRPO, reward space) is detected from its files.
    """
    from langmarl.plots import plot_run, resolve_run

    path = plot_run(resolve_run(run, given_runs_dir(runs_dir_given(runs_dir, old_dir))), output)
    typer.echo(str(path))  # plain stdout, unwrapped: scripts read the path
