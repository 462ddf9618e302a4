"""`langmarl runs [show RUN]`: the runs of every space, and one run in detail."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from langmarl.cli import runs_io
from langmarl.cli.common import (
    OLD_DIR,
    RUNS_DIR_FIX,
    RUNS_DIR_HELP,
    compact_table,
    console,
    given_runs_dir,
    key_values,
    require_dir,
    runs_dir_given,
)
from langmarl.core.runs_dir import DEFAULT_RUNS_DIR

if TYPE_CHECKING:
    from langmarl.store.catalog import RunSummary

OLD_LANGUAGE_DIR = Path("experiments")
"""Where language runs landed before every space shared one runs root (``experiment_dir``'s
old default): searched too, while it exists, when no ``--runs-dir`` is given."""


def default_roots() -> list[Path]:
    """``runs/``, and ``experiments/`` if it exists."""
    return [Path(DEFAULT_RUNS_DIR), *([OLD_LANGUAGE_DIR] if OLD_LANGUAGE_DIR.is_dir() else [])]


def register(app: typer.Typer) -> None:
    """Add the ``runs`` command group to ``app``."""
    group = typer.Typer(
        help="List runs of every kind (language, PARL, MAGRPO/IAC/MAAC, Prompt2Policy).",
        invoke_without_command=True,
    )
    group.callback()(list_runs)
    group.command("show")(show)
    runs_io.register(group)
    app.add_typer(group, name="runs")


def list_runs(
    ctx: typer.Context,
    runs_dir: list[Path] = typer.Option(
        None, "--runs-dir", help="Directory holding runs (repeatable; default: runs/)."
    ),
    old_dir: list[Path] = OLD_DIR,
    kind: str | None = typer.Option(None, "--kind", help="Only runs of this kind."),
    status: str | None = typer.Option(None, "--status", help="Only runs with this status."),
) -> None:
    """List the runs under the directories with kind, status, progress and score."""
    from langmarl.core.errors import ConfigError
    from langmarl.core.validation import did_you_mean
    from langmarl.store import kinds
    from langmarl.store.catalog import LISTED_STATUSES, find_runs

    if ctx.invoked_subcommand is not None:
        return
    if kind is not None and kinds.find(kind) is not None:
        kind = kinds.get(kind).name  # an older name of the kind lists its runs too
    for value, known, what in ((kind, kinds.names(), "kind"), (status, LISTED_STATUSES, "status")):
        if value is not None and value not in known:
            hint = did_you_mean(value, known)
            raise ConfigError(f"unknown {what} {value!r}.{hint} Choose from {', '.join(known)}")
    given = [require_dir(root, "--runs-dir", RUNS_DIR_FIX) for root in
             runs_dir_given(runs_dir, old_dir) or []]  # fmt: skip
    roots = given or default_roots()
    found = {root: find_runs(root, kind=kind, status=status) for root in roots}
    if not any(found.values()):
        console.print(f"No runs in {', '.join(str(r) for r in roots)}.")
        return
    for root, runs in found.items():
        if runs:
            console.print(_runs_table(root, runs))
    if any(run.layout == "old" for runs in found.values() for run in runs):
        console.print("* a layout from before the run contract, read as such")


def _runs_table(root: Path, runs: list[RunSummary]) -> Any:
    """The runs found under ``root``, one table titled with the directory: a row names its
    run by the path below it (a run id, which ``runs show`` and the plots accept beside a
    path), so ids, kinds, statuses and scores stay whole at 80 columns; progress wraps
    between words."""
    from rich import box
    from rich.table import Table

    table = Table(
        title=f"{root}/",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("run", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("progress", overflow="fold", min_width=len("progress"))
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    for run in runs:
        table.add_row(
            str(run.path.relative_to(root)) if run.path != root else str(run.path),
            run.kind,
            run.status + ("*" if run.layout == "old" else ""),
            run.progress.replace(" iterations", " iter."),
            "" if run.score is None else f"{run.score:.3f}",
            _when(run.updated_at),
        )
    return table


def _when(timestamp: float) -> str:
    """``HH:MM`` for today, ``MM-DD HH:MM`` before."""
    moment = time.localtime(timestamp)
    today = time.localtime()[:3] == moment[:3]
    return time.strftime("%H:%M" if today else "%m-%d %H:%M", moment)


def show(
    run: str = typer.Argument(..., help="A run directory, or a run id under --runs-dir."),
    runs_dir: Path | None = typer.Option(None, "--runs-dir", help=RUNS_DIR_HELP),
    old_dir: Path | None = OLD_DIR,
) -> None:
    """One run in detail: status, progress and what its kind has to show."""
    from langmarl.plots.api import resolve_run
    from langmarl.store import kinds
    from langmarl.store.catalog import describe

    summary = describe(resolve_run(run, given_runs_dir(runs_dir_given(runs_dir, old_dir))))
    rows = [
        ("run", f"{summary.run_id} ({summary.kind})"),
        ("path", str(summary.path)),
        ("status", summary.status + (f" — {summary.error}" if summary.error else "")),
    ]
    if summary.layout == "old":
        rows.append(("layout", "old (written before the run contract; read as such)"))
    rows.append(("progress", summary.progress))
    if summary.score is not None:
        rows.append(("score", f"{summary.score:.3f}"))
    spec = kinds.find(summary.kind)
    more, after = SHOWN.get(spec.view if spec else "", _show_steps)(summary)
    console.print(key_values((f"{label}:", value) for label, value in rows + more))
    for renderable in after:
        console.print(renderable)


Shown = tuple[list[tuple[str, str]], list[Any]]
"""What ``runs show`` adds for a kind: ``label: value`` rows below the summary's, then
renderables printed after them."""


def _show_language(summary: RunSummary) -> Shown:
    """The newest prompt of each agent and its diff against the first checkpoint."""
    from rich.text import Text

    after: list[Any]

    details, after = summary.details, []
    for agent_id, text in details.get("policies", {}).items():
        after.append(
            Text.assemble("\n", (agent_id, "bold"), f" (checkpoint {details['diff_to']}):")
        )
        after.append(Text(text))
        diff = details["diffs"].get(agent_id, "")
        label = f"diff against checkpoint {details['diff_from']}"
        after.append(Text(f"{label}:") if diff else Text(f"{label}: unchanged"))
        if diff:
            after.append(diff_lines(diff))
    return [], after


def diff_lines(diff: str) -> Any:
    """A unified diff whose every line keeps its marker apart: a line too long for the
    terminal wraps under its own text, so a continuation never reads as a context line
    (it lost its ``+`` when the line was printed whole)."""
    from rich.table import Table
    from rich.text import Text

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for line in diff.splitlines():
        header = line.startswith(("+++", "---", "@@"))
        marker = line[:1] if line[:1] in ("+", "-", " ") and not header else ""
        grid.add_row(marker, Text(line[len(marker) :]))
    return grid


def _show_steps(summary: RunSummary) -> Shown:
    """Checkpoints, held-out before → after, and the last metrics line."""
    rows: list[tuple[str, str]]
    details, rows = summary.details, []
    if "checkpoints" in details:
        rows.append(("checkpoints", ", ".join(details["checkpoints"]) or "none"))
    heldout = details.get("heldout")
    if heldout:
        before, after = heldout.get("before") or {}, heldout.get("after") or {}
        change = f"{_cell(before.get('mean'))} → {_cell(after.get('mean'))}"
        rows.append(("held-out", f"{change} (n={before.get('n')})"))
    return rows, _last_metrics(details.get("last_metrics"))


def _last_metrics(last: dict[str, Any] | None) -> list[Any]:
    """The newest metrics line as ``key=value`` items in columns across the width (an
    item never breaks; one wider than the terminal wraps on its own)."""
    from rich.columns import Columns
    from rich.text import Text

    if not last:
        return []
    shown = {key: f"{value:.4g}" if isinstance(value, float) else str(value)
             for key, value in last.items()}  # fmt: skip
    items = [Text(f"{key}={value}") for key, value in shown.items()]
    return ["last metrics:", Columns(items, padding=(0, 2), column_first=True)]


def _show_session(summary: RunSummary) -> Shown:
    """A session's outcome and its iterations, one row each."""
    from rich.text import Text

    details, best = summary.details, summary.details.get("best_iteration")
    best_text = None if best is None else f"best iteration {best}"
    outcome = ", ".join(part for part in (details.get("outcome"), best_text) if part)
    table = compact_table("iteration", "intent score", "mean return", text=("reward",))
    for it in details.get("iterations", []):
        error = f"; error: {it['error']}" if it.get("error") else ""
        table.add_row(str(it["iteration"]), _cell(it["intent_score"]),
                      _cell(it["mean_return"]), Text(f"{it['reward_origin']}{error}"))  # fmt: skip
    rows = [("outcome", outcome)] if outcome else []
    return rows, [table] if details.get("iterations") else []


SHOWN = {"language": _show_language, "reward": _show_session}
"""What ``runs show`` prints beyond the summary, per dashboard view of the run's kind."""


def _cell(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)
