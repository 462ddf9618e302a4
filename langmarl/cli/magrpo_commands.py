"""`langmarl magrpo train|eval`: weight-space training (MAGRPO, IAC, MAAC) from a run file,
and the held-out comparison of a run's untrained and trained agents."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from langmarl.cli.common import (
    RUN_DIR_FIX,
    RUNS_DIR_SET,
    SET_OPTION_HELP,
    console,
    parse_overrides,
    require_dir,
    with_runs_dir,
)

if TYPE_CHECKING:
    from langmarl.magrpo.base import WeightSpaceTrainer
    from langmarl.magrpo.heldout import HeldoutReport
    from langmarl.magrpo.run import RunConfig


def register(app: typer.Typer) -> None:
    """Add the ``magrpo`` command group to ``app``."""
    group = typer.Typer(help="Weight space: train agents' weights (MAGRPO, IAC, MAAC).")
    group.command("train")(train)
    group.command("eval")(evaluate)
    app.add_typer(group, name="magrpo")


def train(
    config: str = typer.Argument(
        ..., help="Run file (JSON or YAML), e.g. configs/magrpo/poster.json."
    ),
    set_: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
    resume: str | None = typer.Option(
        None, "--resume", help="Continue from 'latest' or a checkpoints/step-* directory."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate the run file and stop."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write curves.png at the end."),
    runs_dir: Path | None = RUNS_DIR_SET,
) -> None:
    """Train agents' weights with MAGRPO (or IAC/MAAC: set algorithm in the run file)."""
    from langmarl.cli.config_kinds import require_config_kind
    from langmarl.magrpo.run import load_run_config
    from langmarl.store.lock import RunLock

    require_config_kind(config, "magrpo")
    run = load_run_config(config, with_runs_dir(parse_overrides(set_), runs_dir))
    args = run.trainer_config()
    console.print(
        f"[bold]{run.algorithm}[/] on task [bold]{run.task.name}[/]: {len(run.models)} agents, "
        f"{args.num_turns} turn(s), output in {args.output_dir}"
    )
    if dry_run:
        console.print_json(run.model_dump_json())
        return
    with RunLock(args.output_dir):  # one process per run: a second --resume is refused
        _train_locked(run, resume, plot)


def _train_locked(run: RunConfig, resume: str | None, plot: bool) -> None:
    from langmarl.magrpo.checkpoint import resolve_checkpoint
    from langmarl.magrpo.heldout import HeldoutReport, heldout_examples, heldout_scores, read_report
    from langmarl.magrpo.run import build_magrpo_trainer, check_new_run, save_run_config

    args = run.trainer_config()
    if _finished(run, resume):
        return
    checkpoint = None
    if resume:  # refused before the models load
        checkpoint = resolve_checkpoint(Path(args.output_dir), resume)
    else:
        check_new_run(run)
    trainer = build_magrpo_trainer(run)
    save_run_config(run)
    report = read_report(args.output_dir) if resume else None
    if checkpoint is not None:
        trainer.load_checkpoint(checkpoint)
    if run.heldout and report is None and trainer.step == 0:
        console.print(
            f"held-out evaluation of the untrained agents ({len(heldout_examples(trainer))})…"
        )
        report = HeldoutReport(
            task=run.task.name,
            before=heldout_scores(trainer, heldout_examples(trainer), "untrained"),
        )
        report.write(args.output_dir)
        _print_headline(report, bold=False)
    _train_with_progress(trainer)
    with _status_after_training(trainer):
        if report is not None:
            report.after = heldout_scores(
                trainer, heldout_examples(trainer), f"step {trainer.step}"
            )
            report.write(args.output_dir)
            _print_samples(report)
        else:
            scores = trainer.evaluate() or {}
            shown = (
                f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in scores.items()
            )
            console.print("eval: " + " ".join(shown))
    console.print(
        f"metrics: {args.output_dir}/metrics.jsonl; checkpoints: {args.output_dir}/checkpoints/"
    )
    if plot:
        _plot(args.output_dir)
    if report is not None:
        _print_headline(report)


def _finished(run: RunConfig, resume: str | None) -> bool:
    """Whether the run directory holds a completed run. Rerunning it refuses (a new run needs
    a new directory); ``--resume`` says there is nothing left and shows the result.

    Raises:
        ConfigError: for a rerun without ``--resume`` of a completed run.
    """
    from langmarl.core.errors import ConfigError
    from langmarl.magrpo.heldout import read_report
    from langmarl.store.run import RunDir

    args = run.trainer_config()
    output = args.output_dir
    info = RunDir(output).read() or {}
    if info.get("status") != "completed":
        return False
    recorded = info.get("config") or {}
    budget = ("max_steps", "num_train_epochs")  # raised: --resume trains the extra steps
    if resume and any(recorded.get(key) != getattr(args, key) for key in budget):
        return False
    report = read_report(output)
    result = f"; {report.headline()}" if report is not None and report.after else ""
    step = f"step {info.get('step', '?')} of {info.get('total_steps', '?')}"
    done = f"{output!r} holds a finished run (completed at {step}{result})"
    if not resume:
        raise ConfigError(
            f"{done}: its results are in {output}/ (metrics.jsonl, heldout.json, curves.png). "
            "To train again, give it a new directory: --set run_id=<new name>"
        )
    console.print(f"Nothing to resume: {done}.", markup=False, highlight=False)
    return True


@contextlib.contextmanager
def _status_after_training(trainer: WeightSpaceTrainer) -> Iterator[None]:
    """The held-out pass after training is part of the run: if it fails (or is interrupted),
    ``run.json`` says so instead of ``completed``."""
    try:
        yield
    except KeyboardInterrupt:
        trainer.run.finish("stopped", "interrupted during the held-out evaluation")
        raise
    except Exception as exc:
        reason = f"held-out evaluation after training failed: {type(exc).__name__}: {exc}"
        trainer.run.finish("failed", reason)
        raise


def evaluate(
    run_dir: Path = typer.Argument(..., help="A run directory (holds run_config.json)."),
    checkpoint: str = typer.Option(
        "latest", help="The trained agents: 'latest' or a checkpoints/step-* directory."
    ),
    num_examples: int | None = typer.Option(
        None, "--num-examples", "-n", min=1, help="Held-out examples to use (default: all)."
    ),
) -> None:
    """Score the untrained and the trained agents greedily on the held-out examples."""
    from langmarl.magrpo.heldout import evaluate_checkpoint

    require_dir(run_dir, "run directory", RUN_DIR_FIX)
    render_report(evaluate_checkpoint(run_dir, checkpoint, num_examples), run_dir)


def render_report(report: HeldoutReport, run_dir: Path) -> None:
    """A weight-space held-out report: its first samples, where it is saved, the headline."""
    from langmarl.magrpo.heldout import HELDOUT_FILE

    _print_samples(report)
    console.print(f"report: {run_dir / HELDOUT_FILE}")
    _print_headline(report)


def _train_with_progress(trainer: WeightSpaceTrainer) -> None:
    from rich.progress import Progress

    with Progress(console=console) as progress:
        bar = progress.add_task("training", total=trainer.total_steps, completed=trainer.step)
        original = trainer.training_step

        def step_with_progress(examples: list[dict[str, object]]) -> dict[str, float]:
            metrics = original(examples)
            progress.advance(bar)
            step = trainer.step + 1  # the step metrics.jsonl names (from 1)
            progress.console.print(step_line(step, metrics))
            return metrics

        trainer.training_step = step_with_progress  # type: ignore[method-assign]
        trainer.train()


def step_line(step: int, metrics: dict[str, float]) -> str:
    """``step 3: reward 0.412 return 0.412``; with several turns, each turn's mean reward
    (``reward 0.000 / 0.567``): a task that rewards only a later turn (the reference game's
    listener) showed 0.000 at every step."""
    turns = [
        metrics[f"reward_turn{t}"] for t in range(len(metrics)) if f"reward_turn{t}" in metrics
    ]
    shown = (
        " / ".join(f"{r:.3f}" for r in turns) if len(turns) > 1 else f"{metrics['reward_mean']:.3f}"
    )
    return f"step {step}: reward {shown} return {metrics['return_mean']:.3f}"


def _print_headline(report: HeldoutReport, bold: bool = True) -> None:
    """The closing line: wrapped at spaces on a terminal; one line anywhere else (a log, a
    pipe), where scripts read it whole."""
    style = "bold" if bold else None
    whole = not console.is_terminal
    console.print(report.headline(), style=style, soft_wrap=whole, markup=False, highlight=False)


def _print_samples(report: HeldoutReport, count: int = 3) -> None:
    """The first ``count`` held-out examples as text: the prompt, then each agent's
    completion before and after training with the return, indented under it."""
    from rich.padding import Padding
    from rich.text import Text

    if report.after is None:
        return
    console.print("held-out examples:")
    pairs = zip(report.before.samples[:count], report.after.samples[:count], strict=False)
    for number, (before, after) in enumerate(pairs, 1):
        console.print(Padding(Text(f"{number}. {before['prompt'].strip()}", style="bold"), (0, 2)))
        for score, sample in ((report.before, before), (report.after, after)):
            console.print(Padding(Text(f"{score.label}: return {sample['return']:.2f}"), (0, 4)))
            for index, completion in enumerate(sample["completions"]):
                text = Text(f"agent-{index}: {str(completion).strip() or '(empty)'}")
                console.print(Padding(text, (0, 0, 0, 6)))


def _plot(run_dir: str) -> None:
    from langmarl.core.errors import LangmarlError
    from langmarl.plots import plot_run

    try:
        console.print(f"plot: {plot_run(run_dir)}")
    except LangmarlError as exc:  # a missing plotting extra must not fail a finished run
        console.print(f"[yellow]no plot:[/] {exc}")
