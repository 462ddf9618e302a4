"""`langmarl eval RUN`: a run's held-out evaluation, as its kind does it.

The run's recorded kind (:mod:`langmarl.store.kinds`) names its evaluator: the two below for
language and weight-space runs, a kind's own for any other; a kind without one says in one
line what to look at instead. A directory without ``run.json`` (a language run older than
the run contract) is evaluated as a language run.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from langmarl.cli.common import RUN_DIR_FIX, compact_table, console, require_dir
from langmarl.store.kinds import EvalRequest


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
        kinds.load(spec.evaluate)(run_dir, EvalRequest(split, iteration, episodes))
    finally:
        lock.release()


def evaluate_language(run_dir: Path, request: EvalRequest) -> None:
    """A language run's initial vs final policies on ``request.split``."""
    from langmarl.trainer.evaluation import compare_run, headline

    split = request.split
    with console.status(f"Evaluating {run_dir} on {split}…"):
        result = compare_run(
            run_dir, split=split, iteration=request.iteration, episodes=request.episodes
        )
    console.print(comparison_table(result))
    console.print(f"Difference (final − initial): [bold]{result['difference']:+.3f}[/]")
    if result["note"]:
        console.print(f"Note: {result['note']}.")
    console.print(f"Saved to {run_dir / 'evals' / f'{split}_compare.json'}")
    whole = not console.is_terminal  # one line for scripts, wrapped on a terminal
    console.print(headline(result), soft_wrap=whole, markup=False, highlight=False)


def evaluate_weights(run_dir: Path, request: EvalRequest) -> None:
    """A MAGRPO/IAC/MAAC run's untrained vs trained agents on its held-out examples
    (``request.iteration``: the checkpoint of that step; ``episodes``: examples)."""
    from langmarl.cli.magrpo_commands import evaluate
    from langmarl.core.errors import ConfigError

    if request.split != "test":
        raise ConfigError(
            "a weight-space run is evaluated on its task's held-out examples only: drop --split"
        )
    step = request.iteration
    checkpoint = "latest" if step is None else str(run_dir / "checkpoints" / f"step-{step:06d}")
    evaluate(run_dir, checkpoint=checkpoint, num_examples=request.episodes)


def comparison_table(result: dict[str, Any]) -> Any:
    """A rich table of the initial vs final held-out scores, each with n and a 95%
    interval."""
    from langmarl.core.intervals import ScoreInterval

    initial, final = result["initial"], result["final"]
    table = compact_table(
        f"initial (checkpoint {initial['iteration']})",
        f"final (checkpoint {final['iteration']})",
        lead=("",),
        title=f"Held-out score · {result['run_id']} · {result['split']}",
    )
    intervals = [ScoreInterval(**r["interval"]) for r in (initial, final)]
    rows = {
        "mean reward": [f"{i.mean:.3f}" for i in intervals],
        "95% interval": [
            "n/a (n=1)" if i.low is None else f"[{i.low:.3f}, {i.high:.3f}]" for i in intervals
        ],
        "method": [
            {"wilson": "Wilson (success rate)", "t": "t (mean)"}[i.method] for i in intervals
        ],
        "n": [str(i.n) for i in intervals],
        "failed episodes": [str(r["failed_episodes"]) for r in (initial, final)],
    }
    for name, cells in rows.items():
        table.add_row(name, *cells)
    return table
