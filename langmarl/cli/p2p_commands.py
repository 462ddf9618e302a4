"""`langmarl p2p run`, `resume` and `bench`: reward-space sessions from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from langmarl.cli import p2p_play
from langmarl.cli.common import (
    CONFIG_ALIAS,
    SET_OPTION_HELP,
    compact_table,
    config_argument,
    console,
    parse_overrides,
    require_dir,
)
from langmarl.cli.p2p_progress import session_progress


def register(app: typer.Typer) -> None:
    """Add the ``p2p`` command group to ``app``."""
    group = typer.Typer(help="Reward space: intent -> reward code -> PPO -> judge -> revise.")
    group.command("run")(run)
    group.command("resume")(resume)
    group.command("bench")(bench)
    group.command("play")(p2p_play.play)
    app.add_typer(group, name="p2p")


# options shared by `run` and `bench` (`resume` reads the settings from the session)
ITERATIONS = typer.Option(None, "--iterations", min=1, help="Max iterations.")
TIMESTEPS = typer.Option(None, "--timesteps", min=1, help="PPO steps per run.")
LLM = typer.Option("local", help="LLM preset or config file for the agents.")
VLM = typer.Option(None, help="Multimodal preset for the video judge.")
RUNS_DIR = typer.Option(
    None, "--runs-dir", help="Where sessions are written (default: the config's runs_dir, runs/)."
)
OVERRIDES = typer.Option(None, "--set", help=SET_OPTION_HELP)
CONFIG = typer.Argument(None, help="LoopConfig file (YAML/JSON), e.g. configs/p2p/smoke.yaml.")


def loop_config(
    env_id: str | None,
    iterations: int | None,
    timesteps: int | None,
    overrides: dict[str, Any],
    config_file: Path | None = None,
    runs_dir: Path | None = None,
) -> Any:
    """The session's ``LoopConfig``: the file (if any), then the options, then ``--set``."""
    from langmarl.config.loading import apply_overrides, read_mapping
    from langmarl.core.validation import validate_model
    from langmarl.p2p.loop_config import LoopConfig

    data: dict[str, Any] = read_mapping(config_file) if config_file else {}
    if env_id is not None:
        data["env_id"] = env_id
    if iterations is not None:
        data["max_iterations"] = iterations
    if timesteps is not None:
        data["total_timesteps"] = timesteps
    if runs_dir is not None:
        data["runs_dir"] = str(runs_dir)
    source = str(config_file) if config_file else "command-line options"
    return validate_model(LoopConfig, apply_overrides(data, overrides), source)


def _clients(llm: str, vlm: str | None) -> tuple[Any, Any]:
    from langmarl.llm.client import LLMClient
    from langmarl.llm.presets import get_llm_config
    from langmarl.llm.tracker import UsageLedger

    ledger = UsageLedger()
    text = LLMClient(get_llm_config(llm), role="p2p", ledger=ledger)
    vision = LLMClient(get_llm_config(vlm), role="p2p_vlm", ledger=ledger) if vlm else None
    return text, vision


def run(
    intent: str = typer.Argument(
        ..., help='The behaviour wanted, e.g. "make the cheetah run backwards".'
    ),
    env: str | None = typer.Option(
        None, "--env", help="Gymnasium MuJoCo env id (default: the config's, HalfCheetah-v5)."
    ),
    iterations: int | None = ITERATIONS,
    timesteps: int | None = TIMESTEPS,
    llm: str = LLM,
    vlm: str | None = VLM,
    runs_dir: Path | None = RUNS_DIR,
    overrides: list[str] | None = OVERRIDES,
    config_file: Path | None = CONFIG,
    config_option: Path | None = CONFIG_ALIAS,
) -> None:
    """Run one Prompt2Policy session into <runs_dir>/<run_id> and print its status and best
    iteration (a killed, stopped or failed session continues with `langmarl p2p resume
    SESSION_DIR`)."""
    from langmarl.p2p.loop import new_session_id, run_loop

    path = config_argument(config_file, config_option)
    config = loop_config(env, iterations, timesteps, parse_overrides(overrides), path, runs_dir)
    text, vision = _clients(llm, vlm)
    session_dir = Path(config.runs_dir) / (config.run_id or new_session_id())
    console.print(f"p2p session {session_dir} on {config.env_id}")
    with session_progress(session_dir, config.max_iterations):
        result = run_loop(intent, config, llm=text, vlm=vision, session_id=session_dir.name)
    _report(result, session_dir)


def resume(
    session_dir: Path = typer.Argument(
        ..., help="The session directory to continue, e.g. runs/session_20260101_120000_ab12."
    ),
    llm: str = LLM,
    vlm: str | None = VLM,
) -> None:
    """Continue a killed, stopped or failed session where its files say it stopped (its
    intent and settings come from the session; a finished session is refused)."""
    from langmarl.core.errors import ConfigError
    from langmarl.p2p.records import SessionRecord
    from langmarl.p2p.resume import resume_session

    fix = "give a directory `langmarl p2p run` wrote, e.g. runs/session_<time>_<id>"
    settings = SessionRecord(require_dir(session_dir, "session directory", fix)).run.read()
    if settings is None:  # said before the progress display starts
        raise ConfigError(f"{session_dir} holds no session (no run.json): {fix}")
    text, vision = _clients(llm, vlm)
    max_iterations = int((settings.get("config") or {}).get("max_iterations", 0)) or None
    with session_progress(session_dir, max_iterations or 1):
        result = resume_session(session_dir, llm=text, vlm=vision)
    _report(result, session_dir)


def _report(result: Any, session_dir: Path) -> None:
    """Print a session's status and iterations; exit 1 if it failed."""
    colour = {"passed": "green", "max_iterations": "yellow"}.get(result.status, "red")
    console.print(f"[bold]{result.session_id}[/]: [{colour}]{result.status}[/]")
    for step in result.iterations:
        score = "-" if step.intent_score is None else f"{step.intent_score:.2f}"
        console.print(
            f"  {step.iteration_id}: reward={step.reward_origin} score={score} "
            f"return={step.mean_return}"
        )
    if result.best_iteration is not None:
        console.print(f"best: iter_{result.best_iteration} (score {result.best_score:.2f})")
    if result.error:
        console.print(result.error, style="dim", markup=False, highlight=False)
    console.print(f"session dir: {session_dir}")
    if result.status in ("error", "invalid_code"):
        console.print(f"continue it with: langmarl p2p resume {session_dir}")
        raise typer.Exit(1)


def bench(
    cases_csv: Path = typer.Argument(..., help="CSV: env_id,instruction,category,difficulty."),
    iterations: int | None = ITERATIONS,
    timesteps: int | None = TIMESTEPS,
    llm: str = LLM,
    vlm: str | None = VLM,
    runs_dir: Path | None = RUNS_DIR,
    overrides: list[str] | None = OVERRIDES,
    config_file: Path | None = CONFIG,
    config_option: Path | None = CONFIG_ALIAS,
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Run only the first N cases (a quick look at a bench)."
    ),
) -> None:
    """Run a session per CSV row; report success rate and mean score per group.

    The sessions land in ``<runs_dir>/bench_<time>/`` (each with a new session id: a
    config's ``run_id`` is not used). ``bench.json`` is rewritten after every case
    (``"complete": false`` until the last), so a bench stopped part-way keeps the cases it
    finished.
    """
    import time

    from langmarl.core.files import atomic_write_json
    from langmarl.p2p.bench import CaseOutcome, read_cases, summarize
    from langmarl.p2p.loop import new_session_id, run_loop

    path = config_argument(config_file, config_option)
    cases = read_cases(cases_csv)[:limit]
    text, vision = _clients(llm, vlm)
    settings = parse_overrides(overrides)
    root = Path(loop_config(None, None, None, settings, path, runs_dir).runs_dir)
    bench_dir = root / f"bench_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}"
    outcomes = []
    for index, case in enumerate(cases, 1):
        config = loop_config(case.env_id, iterations, timesteps, settings, path)
        session_id = new_session_id()
        title = f"case {index}/{len(cases)} ({case.env_id}) · "
        with session_progress(bench_dir / session_id, config.max_iterations, title):
            result = run_loop(
                case.instruction, config, llm=text, vlm=vision, runs_dir=bench_dir,
                session_id=session_id,
            )  # fmt: skip
        outcomes.append(
            CaseOutcome(
                case=case,
                session_id=result.session_id,
                status=result.status,
                best_score=result.best_score,
            )
        )
        console.print(f"case {index}: {result.status} score={result.best_score}")
        summary = summarize(outcomes)
        atomic_write_json(
            bench_dir / "bench.json",
            {
                "cases": [o.model_dump() for o in outcomes],
                "summary": summary,
                "complete": index == len(cases),
            },
        )
    table = compact_table("cases", "success rate", "mean score", lead=("group",))
    for name, row in summary.items():
        table.add_row(
            name, str(row["cases"]), f"{row['success_rate']:.0%}", f"{row['mean_score']:.2f}"
        )
    console.print(table)
    console.print(f"results: {bench_dir / 'bench.json'}")
