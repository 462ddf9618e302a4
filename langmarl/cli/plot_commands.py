"""`langmarl plot RUN`: a PNG of a run's curves, for every space."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add the ``plot`` command to ``app``."""
    app.command("plot")(plot)


def plot(
    run: str = typer.Argument(..., help="A run directory, or a run id under --dir."),
    output: Path = typer.Option(
        None, "--output", "-o", help="PNG to write (default: RUN/curves.png)."
    ),
    directory: Path = typer.Option(
        None, "--dir", help="Where to look up a run id (default: experiments/, then runs/)."
    ),
) -> None:
    """Plot a run's curves into one PNG and print its path.

    Reward, evaluations and the space's own series; the kind of run (language, weight,
    PARL GRPO, reward space) is detected from its files.
    """
    from langmarl.plots import plot_run, resolve_run

    path = plot_run(resolve_run(run, directory), output)
    typer.echo(str(path))  # plain stdout, unwrapped: scripts read the path
