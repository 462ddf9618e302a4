"""`langmarl magrpo CONFIG`: weight-space training (MAGRPO, IAC, MAAC) from a run file."""

from __future__ import annotations

import typer

from langmarl.cli.common import SET_OPTION_HELP, console, parse_overrides


def register(app: typer.Typer) -> None:
    """Add the ``magrpo`` command to ``app``."""
    app.command("magrpo")(magrpo)


def magrpo(
    config: str = typer.Argument(
        ..., help="Run file (JSON or YAML), e.g. configs/magrpo/writing_tiny.json."
    ),
    set_: list[str] = typer.Option(None, "--set", help=SET_OPTION_HELP),
    resume: str | None = typer.Option(
        None, "--resume", help="Continue from 'latest' or a checkpoints/step-* directory."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate the run file and stop."),
) -> None:
    """Train agents' weights with MAGRPO (or IAC/MAAC: set algorithm in the run file)."""
    from rich.progress import Progress

    from langmarl.magrpo.run import build_trainer, load_run_config

    run = load_run_config(config, parse_overrides(set_))
    args = run.trainer_config()
    console.print(
        f"[bold]{run.algorithm}[/] on task [bold]{run.task.name}[/]: {len(run.models)} agents, "
        f"{args.num_turns} turn(s), output in {args.output_dir}"
    )
    if dry_run:
        console.print_json(run.model_dump_json())
        return
    trainer = build_trainer(run)
    if resume:
        trainer.load_checkpoint(resume)
    with Progress(console=console) as progress:
        bar = progress.add_task("training", total=trainer.total_steps, completed=trainer.step)
        original = trainer.training_step

        def step_with_progress(examples: list[dict[str, object]]) -> dict[str, float]:
            metrics = original(examples)
            progress.advance(bar)
            progress.console.print(
                f"step {trainer.step + 1}: reward {metrics['reward_mean']:.3f} "
                f"return {metrics['return_mean']:.3f}"
            )
            return metrics

        trainer.training_step = step_with_progress
        trainer.train()
    result = trainer.evaluate()
    console.print(f"eval: {result}")
    console.print(
        f"metrics: {args.output_dir}/metrics.jsonl; checkpoints: {args.output_dir}/checkpoints/"
    )
