"""`langmarl train`, `langmarl eval`: language-space training from the shell."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from langmarl.cli.common import (
    RUNS_DIR_SET,
    SET_OPTION_HELP,
    compact_table,
    console,
    parse_overrides,
    with_runs_dir,
)

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from langmarl.trainer.monte_carlo import MonteCarloTrainer

PHASE_LABELS = {
    "load": "1 load policies",
    "generate": "2 generate episodes",
    "evaluate": "3 evaluate + gradients",
    "update": "4 aggregate + update",
    "validate": "4b validate candidates",
    "checkpoint": "5 checkpoint",
}


def register(app: typer.Typer) -> None:
    """Add the training commands to ``app``."""
    app.command("train")(train)


def _progress_callback(progress: Progress, total_iterations: int) -> Any:
    """A trainer callback driving one rich progress bar per phase."""
    from langmarl.trainer.callbacks import Callback

    class PhaseProgress(Callback):
        """Iterations are numbered from 0, as in the log, metrics.jsonl and checkpoints."""

        def __init__(self) -> None:
            self.tasks: dict[str, TaskID] = {}
            self.overall: TaskID | None = None

        def on_iteration_start(self, iteration: int, trainer: MonteCarloTrainer) -> None:
            for task in self.tasks.values():
                progress.remove_task(task)
            self.tasks = {}
            if self.overall is None:  # a resumed run starts part-way
                label = f"iterations 1–{total_iterations}"
                self.overall = progress.add_task(label, total=total_iterations, completed=iteration)

        def on_phase_start(self, iteration: int, phase: str, total: int) -> None:
            label = f"iteration {iteration + 1} · {PHASE_LABELS.get(phase, phase)}"
            self.tasks[phase] = progress.add_task(label, total=max(total, 1))

        def on_phase_advance(self, iteration: int, phase: str) -> None:
            if phase in self.tasks:
                progress.advance(self.tasks[phase])

        def on_iteration_end(
            self, iteration: int, stats: dict[str, Any], trainer: MonteCarloTrainer
        ) -> None:
            if self.overall is not None:
                progress.advance(self.overall)
            failed = stats.get("failed_episodes", 0)
            failures = f", [red]{failed} failed[/]" if failed else ""
            progress.console.print(
                f"iteration {iteration + 1}: avg reward [bold]{stats['avg_reward']:.3f}[/] "
                f"({stats['num_episodes']} episodes{failures}, {stats['llm_calls']} LLM calls, "
                f"{stats['total_tokens']:,} tokens, {stats['duration_s']:.0f}s)"
            )

    return PhaseProgress()


def summary_table(metrics: list[dict[str, Any]]) -> Any:
    """A rich table of per-iteration statistics (iterations numbered from 1, as everywhere:
    iteration N produces checkpoint N). Calls and cost are in the usage table below it, so
    the policy updates keep room for whole words at 80 columns (a pipe is 80 wide)."""
    numbers = ("iter", "avg", "min", "max", "eps", "tokens", "acc.", "val.")
    table = compact_table(*numbers, text=("policy updates",), title="Training summary")
    table.caption = "avg/min/max: reward; eps: episodes; acc.: accepted updates; val.: score"
    for m in metrics:
        score = m.get("validation_score")
        table.add_row(
            str(m["iteration"] + 1),
            f"{m['avg_reward']:.3f}",
            f"{m['min_reward']:.2f}",
            f"{m['max_reward']:.2f}",
            str(m["num_episodes"]),
            f"{m['total_tokens']:,}",
            str(m.get("accepted_updates", "")),
            "" if score is None else f"{score:.3f}",
            ", ".join(f"{a}: {how}" for a, how in m.get("policy_updates", {}).items()),
        )
    return table


def usage_table(metrics: list[dict[str, Any]]) -> Any:
    """A rich table of LLM usage per role, summed over iterations."""
    totals: dict[str, dict[str, float]] = {}
    for m in metrics:
        for role, usage in m.get("usage_by_role", {}).items():
            row = totals.setdefault(role, {})
            for key in ("calls", "failures", "input_tokens", "output_tokens", "cost_usd"):
                row[key] = row.get(key, 0) + usage.get(key, 0)
    numbers = ("calls", "failures", "input tokens", "output tokens", "$")
    table = compact_table(*numbers, lead=("role",), title="Usage")
    for role, row in totals.items():
        table.add_row(
            role,
            str(int(row["calls"])),
            str(int(row["failures"])),
            f"{int(row['input_tokens']):,}",
            f"{int(row['output_tokens']):,}",
            f"{row['cost_usd']:.4f}",
        )
    return table


def train(
    config: str = typer.Argument(..., help="Config file (JSON or YAML)."),
    set_: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
    run_id: str | None = typer.Option(
        None, "--run-id", help="Run directory name (= --set run_id=ID; default: exp_name)."
    ),
    fresh: bool = typer.Option(
        False, "--fresh", help="Start a new run (run id + timestamp) instead of resuming."
    ),
    runs_dir: Path | None = RUNS_DIR_SET,
) -> None:
    """Train language policies into <runs_dir>/<run_id>; an existing run with the same id is
    resumed."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from langmarl.api import build_trainer
    from langmarl.cli.config_kinds import require_config_kind
    from langmarl.config.loading import load_config
    from langmarl.core.errors import RunFailedError
    from langmarl.trainer.callbacks import CheckpointCallback, LoggingCallback

    require_config_kind(config, "env")
    overrides = parse_overrides(set_) | ({"run_id": run_id} if run_id is not None else {})
    resolved = load_config(config, with_runs_dir(overrides, runs_dir))
    if fresh:
        resolved = resolved.with_fresh_run_id(time.strftime("%Y%m%d-%H%M%S"))
    logging.getLogger("langmarl.run").setLevel(logging.ERROR)  # the summary counts the rest
    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=console, transient=False) as progress:
        callbacks = [
            LoggingCallback(),
            CheckpointCallback(),
            _progress_callback(progress, resolved.num_iterations),
        ]
        trainer = build_trainer(resolved, callbacks=callbacks)
        console.print(f"Run [bold]{trainer.run_id}[/] in {trainer.store.run_dir(trainer.run_id)}")
        try:
            metrics, failure = trainer.train(), None
        except RunFailedError as exc:  # the run is left resumable: report it, then fail
            metrics, failure = trainer.store.load_metrics(trainer.run_id), exc
    _report(trainer, metrics)
    if failure is not None:
        raise failure


def _report(trainer: MonteCarloTrainer, metrics: list[dict[str, Any]]) -> None:
    info = trainer.store.run_info(trainer.run_id)
    if metrics:
        console.print(summary_table(metrics))
        console.print(usage_table(metrics))
        first, last = metrics[0]["avg_reward"], metrics[-1]["avg_reward"]
        console.print(f"Reward: {first:.3f} (iteration 1) → {last:.3f} (iteration {len(metrics)})")
        scores = [m["validation_score"] for m in metrics if m.get("validation_score") is not None]
        if scores:
            accepted = sum(m.get("accepted_updates", 0) for m in metrics)
            rejected = sum(m.get("rejected_updates", 0) for m in metrics)
            console.print(
                f"Validation score of the kept policies: {scores[0]:.3f} (after the first "
                f"iteration) → {scores[-1]:.3f} "
                f"({accepted} updates accepted, {rejected} rejected; see updates.jsonl)"
            )
    status = info.get("status")
    reason = f" ({info['error']})" if info.get("error") else ""
    console.print(f"Status: [bold]{status}[/]{reason}")
    console.print(f"Run directory: {trainer.store.run_dir(trainer.run_id).resolve()}")
    console.print(f"Held-out check: langmarl eval {trainer.store.run_dir(trainer.run_id)}")
