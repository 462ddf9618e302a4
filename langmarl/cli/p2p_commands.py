"""`langmarl p2p run`, `resume` and `bench`: reward-space sessions from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import typer

from langmarl.cli import p2p_analyze, p2p_play
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
    group.command("analyze")(p2p_analyze.analyze)
    group.command("train-run")(train_run)
    app.add_typer(group, name="p2p")


# options shared by `run` and `bench` (`resume` reads the settings from the session)
ITERATIONS = typer.Option(None, "--iterations", min=1, help="Max iterations.")
TIMESTEPS = typer.Option(None, "--timesteps", min=1, help="PPO steps per run.")
LLM = typer.Option(
    None, help="LLM preset or config file for the agents (default: the config's llm, else local)."
)
VLM = typer.Option(None, help="Multimodal preset for the video judge (default: the config's).")
RUNS_DIR = typer.Option(
    None, "--runs-dir", help="Where sessions are written (default: the config's runs_dir, runs/)."
)
OVERRIDES = typer.Option(None, "--set", help=SET_OPTION_HELP)
CONFIG = typer.Argument(None, help="LoopConfig file (YAML/JSON), e.g. configs/p2p/smoke.yaml.")
CHECK = typer.Option(
    None, "--check", help="A check file: `def check(trajectory, summary)` scoring an episode in "
    "[0, 1]; its score picks the best iteration (the judges are recorded beside it).",
)  # fmt: skip


def loop_config(
    env_id: str | None,
    iterations: int | None,
    timesteps: int | None,
    overrides: dict[str, Any],
    config_file: Path | None = None,
    runs_dir: Path | None = None,
    check: Path | None = None,
) -> Any:
    """The session's ``LoopConfig``: the file (if any), then the options, then ``--set``."""
    from langmarl.config.loading import apply_overrides, read_mapping
    from langmarl.core.validation import ConfigSource, validate_model
    from langmarl.p2p.session.config import LoopConfig

    data: dict[str, Any] = read_mapping(config_file) if config_file else {}
    if env_id is not None:
        data["env_id"] = env_id
    if iterations is not None:
        data["max_iterations"] = iterations
    if timesteps is not None:
        data["total_timesteps"] = timesteps
    if runs_dir is not None:
        data["runs_dir"] = str(runs_dir)
    if check is not None:
        data["check"] = str(check)
    source = ConfigSource(config_file or "command-line options", overrides)
    return validate_model(LoopConfig, apply_overrides(data, overrides), source)


def _clients(llm: str | dict[str, Any], vlm: str | dict[str, Any] | None) -> tuple[Any, Any]:
    """The text and vision clients: each a preset name, an LLM config file or mapping."""
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig, coerce_llm
    from langmarl.llm.tracker import UsageLedger

    def config(value: str | dict[str, Any]) -> LLMConfig:
        return cast(LLMConfig, coerce_llm(value))  # None only for None, never given here

    ledger = UsageLedger()
    text = LLMClient(config(llm), role="p2p", ledger=ledger)
    vision = LLMClient(config(vlm), role="p2p_vlm", ledger=ledger) if vlm else None
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
    llm: str | None = LLM,
    vlm: str | None = VLM,
    runs_dir: Path | None = RUNS_DIR,
    overrides: list[str] | None = OVERRIDES,
    config_file: Path | None = CONFIG,
    config_option: Path | None = CONFIG_ALIAS,
    check: Path | None = CHECK,
) -> None:
    """Run one Prompt2Policy session into <runs_dir>/<run_id> and print its status and best
    iteration (a killed, stopped or failed session continues with `langmarl p2p resume
    SESSION_DIR`)."""
    from langmarl.cli.config_kinds import require_config_kind
    from langmarl.p2p.session.loop import new_session_id, run_loop

    path = config_argument(config_file, config_option)
    if path is not None:  # another command's config: one line naming that command
        require_config_kind(path, "p2p")
    config = loop_config(
        env, iterations, timesteps, parse_overrides(overrides), path, runs_dir, check
    )
    text, vision = _clients(llm or config.llm or "local", vlm or config.vlm)
    session_dir = Path(config.runs_dir) / (config.run_id or new_session_id())
    console.print(f"p2p session {session_dir} on {config.env_id}")
    with session_progress(session_dir, config.max_iterations):
        result = run_loop(intent, config, llm=text, vlm=vision, session_id=session_dir.name)
    _report(result, session_dir)


def resume(
    session_dir: Path = typer.Argument(
        ..., help="The session directory to continue, e.g. runs/session_20260101_120000_ab12."
    ),
    llm: str | None = LLM,
    vlm: str | None = VLM,
) -> None:
    """Continue a killed, stopped or failed session where its files say it stopped (its
    intent and settings come from the session; a finished session is refused)."""
    from langmarl.core.errors import ConfigError
    from langmarl.p2p.session.records import SessionRecord
    from langmarl.p2p.session.resume import resume_session

    fix = "give a directory `langmarl p2p run` wrote, e.g. runs/session_<time>_<id>"
    settings = SessionRecord(require_dir(session_dir, "session directory", fix)).run.read()
    if settings is None:  # said before the progress display starts
        raise ConfigError(f"{session_dir} holds no session (no run.json): {fix}")
    saved = settings.get("config") or {}
    text, vision = _clients(llm or saved.get("llm") or "local", vlm or saved.get("vlm"))
    max_iterations = int(saved.get("max_iterations", 0)) or None
    with session_progress(session_dir, max_iterations or 1):
        result = resume_session(session_dir, llm=text, vlm=vision)
    _report(result, session_dir)


def train_run(
    config_file: Path = typer.Option(
        ..., "--config", help="A p2p_train job's config (reward_source, train, runs_dir, ...)."
    ),
) -> None:
    """Train one PPO run of a session's iteration, confined (what a session's p2p_train
    job runs, with backend=local or ray); the run's directory holds its summary."""
    from langmarl.config.loading import read_mapping
    from langmarl.core.validation import validate_model
    from langmarl.p2p.learner.train_job import TrainJobConfig, run_train_job

    config = validate_model(TrainJobConfig, read_mapping(config_file), str(config_file))
    console.print(f"trained: {run_train_job(config)}", markup=False, highlight=False)


def _report(result: Any, session_dir: Path) -> None:
    """Print a session's status and iterations; exit 1 if it failed."""
    colour = {"passed": "green", "max_iterations": "yellow"}.get(result.status, "red")
    console.print(f"[bold]{result.session_id}[/]: [{colour}]{result.status}[/]")
    for step in result.iterations:
        score = "-" if step.intent_score is None else f"{step.intent_score:.2f}"
        returned = "-" if step.mean_return is None else f"{step.mean_return:.1f}"
        console.print(
            f"  {step.iteration_id}: reward={step.reward_origin} score={score} return={returned}"
        )
        if len(step.candidates) > 1:
            for c in step.candidates:
                mark = " (kept)" if c.name == step.winner else ""
                what = c.error or ("-" if c.score is None else f"{c.score:.2f}")
                line = f"    {c.name}{mark} {c.origin} {c.proposal}: {what}"
                console.print(line, markup=False, highlight=False)
    if result.best_iteration is not None:
        console.print(f"best: iter_{result.best_iteration} (score {result.best_score:.2f})")
    trained = sum(len(step.candidates) for step in result.iterations)
    if result.ppo_steps:
        console.print(f"trained: {trained} candidates, {result.ppo_steps:,} PPO steps")
    if result.scored_by == "check":
        console.print(_check_line(result), markup=False, highlight=False)
    if result.error:
        console.print(result.error, style="dim", markup=False, highlight=False)
    console.print(f"session dir: {session_dir}")
    if result.status in ("error", "invalid_code"):
        console.print(f"continue it with: langmarl p2p resume {session_dir}")
        raise typer.Exit(1)


def _bounds(interval: Any) -> str:
    return "n/a" if interval.low is None else f"[{interval.low:.2f}, {interval.high:.2f}]"


def _check_line(result: Any) -> str:
    """The session's last line when a check scores it::

        Intent score: 0.00 → 1.00 (n=5 episodes, check; 95% CI [0.00, 0.43] → [0.57, 1.00];
        the env's own reward → iter_1; judges: no score)

    with a baseline (``LoopConfig.baseline``), else ``Intent score (check): 1.00 at iter_1
    (n=5 episodes; 95% CI [0.57, 1.00]; judges 0.40)``; or that the check scored nothing."""
    best = next((s for s in result.iterations if s.iteration == result.best_iteration), None)
    if best is None or best.interval is None:
        return "Intent score (check): none (the check scored no iteration; see each judgment.json)"
    interval, judges = best.interval, best.judge_score
    beside = "judges: no score" if judges is None else f"judges {judges:.2f}"
    baseline = result.baseline.interval if result.baseline is not None else None
    if baseline is None:
        return (
            f"Intent score (check): {interval.mean:.2f} at {best.iteration_id} "
            f"(n={interval.n} episodes; 95% CI {_bounds(interval)}; {beside})"
        )
    return (
        f"Intent score: {baseline.mean:.2f} → {interval.mean:.2f} (n={interval.n} episodes, "
        f"check; 95% CI {_bounds(baseline)} → {_bounds(interval)}; the env's own reward → "
        f"{best.iteration_id}; {beside})"
    )


def bench(
    cases_csv: Path | None = typer.Argument(
        None, help="CSV: env_id,instruction,category,difficulty (default: the bench config's)."
    ),
    iterations: int | None = ITERATIONS,
    timesteps: int | None = TIMESTEPS,
    llm: str | None = typer.Option(
        None, help="LLM preset or config file for the agents (default: the bench config's, local)."
    ),
    vlm: str | None = VLM,
    runs_dir: Path | None = RUNS_DIR,
    run_id: str | None = typer.Option(
        None,
        "--run-id",
        help="The bench's directory name (default: bench_<time>_<hex>); "
        "an unfinished bench of that name continues.",
    ),
    overrides: list[str] | None = OVERRIDES,
    config_file: Path | None = typer.Argument(
        None,
        help="Session settings (LoopConfig YAML/JSON) for every case, e.g. "
        "configs/p2p/smoke.yaml; each case sets env_id.",
    ),
    config_option: Path | None = typer.Option(
        None,
        "--config",
        help="A bench config (YAML/JSON: cases, session, llm, limit, "
        "runs_dir, run_id); a file without cases or session is read as config_file.",
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Run only the first N cases (a quick look at a bench)."
    ),
) -> None:
    """Run a session per case; report success rate and mean score per group.

    The bench is one run, ``<runs_dir>/<run_id>`` (default ``bench_<time>_<hex>``), holding
    a session per case and ``bench.json``, rewritten as every case starts and ends
    (``"complete": false`` until the last), so a bench stopped part-way keeps the cases it
    finished; the same command with ``--run-id`` continues it. ``--set`` and the options
    change the session settings.
    """
    from langmarl.cli.config_kinds import require_config_kind
    from langmarl.p2p.bench.run import run_bench

    if config_file is not None:  # another command's config: one line naming that command
        require_config_kind(config_file, "p2p")
    options = {"runs_dir": runs_dir and str(runs_dir), "run_id": run_id, "limit": limit,
               "llm": llm, "vlm": vlm, "cases": cases_csv and str(cases_csv)}  # fmt: skip
    session = {"max_iterations": iterations, "total_timesteps": timesteps}
    config = bench_config(config_option, config_file, options, session, parse_overrides(overrides))
    text, vision = _clients(config.llm, config.vlm)
    result = run_bench(config, llm=text, vlm=vision, hooks=_bench_hooks())
    console.print(_bench_table(result.summary))
    console.print(f"results: {result.bench_dir / 'bench.json'}")


def _bench_hooks() -> Any:
    """A progress display per case, and its outcome in one line when it ends."""
    from langmarl.p2p.bench.run import BenchHooks

    def watch(start: Any) -> Any:
        title = f"case {start.index}/{start.total} ({start.case.env_id}) · "
        return session_progress(start.session_dir, start.config.max_iterations, title)

    def done(start: Any, outcome: Any) -> None:
        console.print(f"case {start.index}: {outcome.status} score={outcome.best_score}")

    return BenchHooks(watch, done)


def _bench_table(summary: dict[str, Any]) -> Any:
    """Success rate and mean score per group (all, each category, each difficulty)."""
    table = compact_table("cases", "success rate", "mean score", lead=("group",))
    for name, row in summary.items():
        table.add_row(
            name, str(row["cases"]), f"{row['success_rate']:.0%}", f"{row['mean_score']:.2f}"
        )
    return table


def bench_config(
    bench_file: Path | None,
    session_file: Path | None,
    options: dict[str, Any],
    session_options: dict[str, Any],
    overrides: dict[str, Any],
) -> Any:
    """The bench's ``BenchConfig``: the bench file (if any), then the options; the session
    settings from the bench file, then the session file, the session options and ``--set``.
    A session file's ``env_id`` is replaced by each case's, its ``runs_dir`` places the
    bench and its ``run_id`` is not used (a new id per session), as before bench configs.

    Raises:
        ConfigError: for two session files, or an invalid field (named, with the fix).
    """
    from langmarl.config.loading import apply_overrides, read_mapping
    from langmarl.core.errors import ConfigError
    from langmarl.core.validation import validate_model
    from langmarl.p2p.bench.cases import BenchConfig, is_bench_mapping

    data: dict[str, Any] = {}
    if bench_file is not None:
        found = read_mapping(bench_file)
        if is_bench_mapping(found):
            data = found
        elif session_file not in (None, bench_file):
            raise ConfigError(f"two session configs given: {str(session_file)!r} and "
                              f"--config {str(bench_file)!r}; pass one")  # fmt: skip
        else:
            session_file = bench_file
    session = dict(data.get("session") or {})
    if session_file is not None:
        session.update(read_mapping(session_file))
    session.update({k: v for k, v in session_options.items() if v is not None})
    session = apply_overrides(session, overrides)
    session.pop("env_id", None), session.pop("run_id", None)
    if "runs_dir" in session:
        data.setdefault("runs_dir", session.pop("runs_dir"))
    if options.get("cases") is not None:
        data.pop("cases_csv", None)
    data.update({k: v for k, v in options.items() if v is not None}, session=session)
    return validate_model(BenchConfig, data, str(bench_file or "command-line options"))
