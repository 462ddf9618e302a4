"""`langmarl runs compare A B …` and `langmarl runs export RUN OUT`: runs side by side, and a
run taken out (metrics as CSV/JSONL, files as an archive). The work is in
:mod:`langmarl.store.compare` and :mod:`langmarl.store.export`; this module only renders."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from langmarl.cli.common import RUNS_DIR_HELP, compact_table, console, given_runs_dir

if TYPE_CHECKING:
    from langmarl.store.compare import Comparison


def register(group: typer.Typer) -> None:
    """Add ``compare`` and ``export`` to the ``runs`` group."""
    group.command("compare")(compare)
    group.command("export")(export)


def compare(
    runs: list[str] = typer.Argument(..., help="Two or more run directories or run ids."),
    runs_dir: Path | None = typer.Option(None, "--runs-dir", help=RUNS_DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Runs side by side: summary, the settings they set differently, their metrics."""
    from langmarl.core.errors import ConfigError
    from langmarl.plots.api import resolve_run
    from langmarl.store.compare import compare_runs

    if len(runs) < 2:
        raise ConfigError("runs compare needs two or more runs: langmarl runs compare A B")
    parent = given_runs_dir(runs_dir)
    found = compare_runs([resolve_run(run, parent) for run in runs])
    if as_json:
        typer.echo(json.dumps(_as_dict(found), indent=2, default=str))
        return
    for table in _tables(found):
        console.print(table)


def _as_dict(found: Comparison) -> dict[str, Any]:
    return {
        "runs": [run.as_dict() for run in found.runs],
        "config_diff": found.config_diff,
        "series": {k: [asdict(s) for s in v] for k, v in found.series.items()},
    }


def _tables(found: Comparison) -> list[Any]:
    names = [run.run_id for run in found.runs]
    summary = compact_table(text=tuple(names), lead=("",), title="runs")
    rows = {
        "kind": [run.kind for run in found.runs],
        "status": [run.status for run in found.runs],
        "progress": [run.progress for run in found.runs],
        "score": [_score(run.score, run.score_label) for run in found.runs],
    }
    for label, values in rows.items():
        summary.add_row(label, *values)
    tables = [summary]
    settings = compact_table(text=tuple(names), lead=("setting",), title="settings that differ")
    for key, values in found.config_diff.items():
        settings.add_row(key, *values)
    tables.append(settings if found.config_diff else "No setting differs.")
    if found.series:
        metrics = compact_table(
            text=tuple(names), lead=("metric",), title="metrics: last (low … high)"
        )
        for key, per_run in found.series.items():
            metrics.add_row(key, *(f"{s.last:.4g} ({s.low:.4g} … {s.high:.4g})" for s in per_run))
        tables.append(metrics)
    return tables


def _score(score: float | None, label: str) -> str:
    return "" if score is None else f"{score:.3f} {label}".strip()


def export(
    run: str = typer.Argument(..., help="A run directory, or a run id under --runs-dir."),
    out: Path = typer.Argument(
        ..., help="Where to write: metrics as .csv or .jsonl, the run's files as .tar.gz or .zip."
    ),
    checkpoints: bool = typer.Option(
        False, "--checkpoints", help="Also archive model checkpoints (large)."
    ),
    runs_dir: Path | None = typer.Option(None, "--runs-dir", help=RUNS_DIR_HELP),
) -> None:
    """Take a run out: its metrics as CSV or JSONL, or its files as an archive."""
    from langmarl.plots.api import resolve_run
    from langmarl.store.export import export_format, export_run

    kind = export_format(out)  # a wrong suffix is refused before anything is read
    path = resolve_run(run, given_runs_dir(runs_dir))
    count = export_run(path, out, checkpoints=checkpoints)
    what = "metrics lines" if kind in ("csv", "jsonl") else "files"
    typer.echo(f"Wrote {out} ({count} {what} of {path.name}).")
