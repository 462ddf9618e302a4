"""`langmarl eval RUN`: a run's held-out evaluation, as its kind does it.

The run's recorded kind (:mod:`langmarl.store.kinds`) names its evaluator, a function of its
space that returns a typed result (language: :func:`langmarl.trainer.evaluation.
evaluate_language`, weight space: :func:`langmarl.magrpo.heldout.evaluate_weights`); this
command only renders it — a result it has no table for by its one-line ``headline()``. A kind
without an evaluator says in one line what to look at instead. A directory without
``run.json`` (a language run older than the run contract) is evaluated as a language run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from langmarl.cli.common import RUN_DIR_FIX, compact_table, console, require_dir
from langmarl.store.kinds import EvalRequest, HeldoutResult

if TYPE_CHECKING:
    from langmarl.trainer.evaluation import HeldoutComparison


def register(app: typer.Typer) -> None:
    """Add ``langmarl eval`` to ``app``."""
    app.command("eval")(eval_run)


def eval_run(
    run_dir: Path = typer.Argument(..., help="A run directory (<runs_dir>/<run_id>)."),
    split: str = typer.Option("test", "--split", help="Task split to evaluate on."),
    iteration: int = typer.Option(
        None, "--iteration", min=0, help="Final checkpoint to compare (default: newest = kept)."
    ),
    episodes: int = typer.Option(None, "--episodes", min=1, help="At most this many tasks."),
) -> None:
    """Evaluate a run's initial and final policies on held-out tasks and store the result in
    the run: language runs side by side with 95% intervals; MAGRPO, IAC and MAAC runs as
    `langmarl magrpo eval` does (--iteration N: checkpoint step N; --episodes: examples).
    A run still training is refused (its lock is held): its score stays its own."""
    from langmarl.core.errors import ConfigError, RunLockedError
    from langmarl.store import kinds
    from langmarl.store.run import RunDir

    require_dir(run_dir, "run directory", RUN_DIR_FIX)
    try:
        spec = kinds.get(RunDir(run_dir).record().kind)
    except ConfigError:  # no run.json: a language run older than the run contract
        spec = kinds.get("language")
    if spec.evaluate is None:
        raise ConfigError(
            f"{run_dir} is a {spec.name} run, which has no held-out evaluation; see "
            + spec.no_eval.format(run=run_dir)
        )
    lock = RunDir(run_dir).lock()
    try:  # a run in training holds its lock: its score is not ours to replace
        lock.acquire()
    except RunLockedError as exc:
        holder = re.search(r"by process (\S+):", str(exc))
        raise ConfigError(
            f"{run_dir} is still training (process {holder.group(1) if holder else '?'} "
            "holds it): evaluate it once it ends; its held-out score is not replaced meanwhile"
        ) from None
    try:
        with console.status(f"Evaluating {run_dir} on {split}…"):
            result = kinds.load(spec.evaluate)(run_dir, EvalRequest(split, iteration, episodes))
    finally:
        lock.release()
    render_result(run_dir, result)


def render_result(run_dir: Path, result: HeldoutResult | None) -> None:
    """Print a kind's evaluation result: the language comparison and the weight-space
    report in full, any other result by its ``headline()`` (nothing for ``None``)."""
    from langmarl.cli.magrpo_commands import render_report
    from langmarl.magrpo.heldout import HeldoutReport
    from langmarl.trainer.evaluation import HeldoutComparison

    if isinstance(result, HeldoutComparison):
        render_comparison(result)
    elif isinstance(result, HeldoutReport):
        render_report(result, run_dir)
    elif result is not None:
        console.print(result.headline(), soft_wrap=True, markup=False, highlight=False)


def render_comparison(result: HeldoutComparison) -> None:
    """A language run's initial vs final policies: the table, the difference, the note,
    where it is saved and the headline."""
    console.print(comparison_table(result))
    console.print(f"Difference (final − initial): [bold]{result.difference:+.3f}[/]")
    if result.note:
        console.print(f"Note: {result.note}.")
    if result.saved_to is not None:
        console.print(f"Saved to {result.saved_to}")
    whole = not console.is_terminal  # one line for scripts, wrapped on a terminal
    console.print(result.headline(), soft_wrap=whole, markup=False, highlight=False)


def comparison_table(result: HeldoutComparison) -> Any:
    """A rich table of the initial vs final held-out scores, each with n and a 95%
    interval."""
    initial, final = result.initial, result.final
    table = compact_table(
        f"initial (checkpoint {initial.iteration})",
        f"final (checkpoint {final.iteration})",
        lead=("",),
        title=f"Held-out score · {result.run_id} · {result.split}",
    )
    intervals = [initial.interval, final.interval]
    rows = {
        "mean reward": [f"{i.mean:.3f}" for i in intervals],
        "95% interval": [
            "n/a (n=1)" if i.low is None else f"[{i.low:.3f}, {i.high:.3f}]" for i in intervals
        ],
        "method": [
            {"wilson": "Wilson (success rate)", "t": "t (mean)"}[i.method] for i in intervals
        ],
        "n": [str(i.n) for i in intervals],
        "failed episodes": [str(side.failed_episodes) for side in (initial, final)],
    }
    for name, cells in rows.items():
        table.add_row(name, *cells)
    return table
