"""Reward-space runs (Prompt2Policy): a session, or one PPO training run of it.

Read through the layout of ``langmarl/p2p/session/records.py``:

- a **session** (``langmarl p2p run``; ``metadata.json``, ``loop_history.json``,
  ``iter_N/``): per iteration the judge's ``intent_score`` and each judge's own score from
  ``iter_N/judgment.json`` (the pass threshold from ``metadata.json``), and the training
  return of the judged run of every iteration;
- a **run** (an ``iter_N/`` directory, or what ``python -m langmarl.p2p.learner.executor`` wrote):
  ``metrics/scalars.jsonl``, whose ``type=train`` rows carry ``episodic_return`` and the
  reward's ``term_means`` per rollout and whose ``type=eval`` rows carry ``mean_return`` and
  ``mean_env_return`` per evaluation checkpoint.

A multi-seed iteration keeps its runs in ``iter_N/runs/<run_id>/``: the plotted run is the
judged one (``aggregation.json``'s ``best_run``), as the loop judges it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmarl.p2p.session.records import IterationRecord, SessionRecord
from langmarl.plots.files import RunFiles
from langmarl.plots.series import Panel, RunKind, RunPlot, Series, column, number

STEP_AXIS = "environment step"


def detect_session(run_dir: Path) -> bool:
    """A session: ``loop_history.json`` or ``metadata.json``, or ``iter_*/`` directories."""
    session = SessionRecord(run_dir)
    return (
        session.history_path.is_file()
        or session.metadata_path.is_file()
        or any(p.is_dir() for p in run_dir.glob("iter_*"))
    )


def detect_run(run_dir: Path) -> bool:
    """One training run: ``metrics/scalars.jsonl`` or ``summary.json`` (or per-seed runs)."""
    record = IterationRecord(run_dir)
    return (
        record.scalars_path.is_file()
        or record.summary_path.is_file()
        or any(r.scalars_path.is_file() for r in record.run_records())
    )


def judged_run(files: RunFiles, iteration: IterationRecord) -> IterationRecord:
    """The run of ``iteration`` that the loop judged: its ``best_run`` if it has several,
    else the iteration directory itself (or its first run with scalars)."""
    aggregation = files.json(iteration.aggregation_path)
    best = aggregation.get("best_run") if isinstance(aggregation, dict) else None
    if isinstance(best, str) and (iteration.runs_dir / best).is_dir():
        return IterationRecord(iteration.runs_dir / best)
    if iteration.scalars_path.is_file():
        return iteration
    with_scalars = [r for r in iteration.run_records() if r.scalars_path.is_file()]
    return with_scalars[0] if with_scalars else iteration


def scalars(files: RunFiles, record: IterationRecord) -> tuple[list[Any], list[Any]]:
    """``(train rows, eval rows)`` of the run's ``metrics/scalars.jsonl`` (lenient)."""
    rows = files.jsonl(record.scalars_path)
    train = [r for r in rows if r.get("type") == "train"]
    return train, [r for r in rows if r.get("type") == "eval"]


def return_series(train: list[Any], evals: list[Any], name: str = "") -> list[Series]:
    """Training return per rollout and evaluation return per checkpoint, in one colour."""
    prefix = f"{name} " if name else ""
    curves = [
        column(train, "episodic_return", "step", f"{prefix}training return"),
        column(evals, "mean_return", "step", f"{prefix}eval return", "markers"),
    ]
    return [Series(s.label, s.x, s.y, s.style, group=name or None) for s in curves]


def _iteration_number(record: IterationRecord, fallback: int) -> int:
    tail = record.iteration_id.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else fallback


def judge_rows(files: RunFiles, iterations: list[IterationRecord]) -> list[dict[str, Any]]:
    """Per judged iteration: ``iteration``, ``intent score`` and each judge's score."""
    rows = []
    for index, record in enumerate(iterations, start=1):
        judgment = files.json(record.judgment_path)
        if not isinstance(judgment, dict):
            continue
        row: dict[str, Any] = {"iteration": _iteration_number(record, index)}
        row["intent score"] = judgment.get("intent_score")
        for score in judgment.get("judges") or []:
            if isinstance(score, dict) and number(score.get("score")) is not None:
                row[f"{score.get('judge', '?')} judge"] = score["score"]
        rows.append(row)
    return rows


def build_session(files: RunFiles) -> RunPlot:
    """Judge scores per iteration (with the pass threshold) and each iteration's returns."""
    session = SessionRecord(files.root)
    iterations = session.iteration_records()
    rows = judge_rows(files, iterations)
    judges = sorted({k for r in rows for k in r if k.endswith(" judge")})
    scores = [column(rows, "intent score", "iteration", "intent score")]
    scores += [column(rows, name, "iteration", name, "markers") for name in judges]
    metadata = files.json(session.metadata_path)
    config = metadata.get("config") if isinstance(metadata, dict) else None
    threshold = number(config.get("pass_threshold")) if isinstance(config, dict) else None
    returns = []
    for index, record in enumerate(iterations, start=1):
        name = f"iter {_iteration_number(record, index)}"
        returns += return_series(*scalars(files, judged_run(files, record)), name)
    panels = [
        Panel(
            "Judge score per iteration",
            "score (0-1)",
            scores,
            hlines={"pass threshold": threshold} if threshold is not None else {},
        ),
        Panel("Return per iteration's training", "episode return", returns, STEP_AXIS),
    ]
    label = "reward space (Prompt2Policy session)"
    return RunPlot(files.root, "reward", label, panels)


def term_series(train: list[dict[str, Any]]) -> list[Series]:
    """One series per reward term: its mean per rollout (``term_means``)."""
    flat = [
        {"step": r.get("step"), **r["term_means"]}
        for r in train
        if isinstance(r.get("term_means"), dict)
    ]
    names = sorted({k for r in flat for k in r if k != "step"})
    return [column(flat, name, "step", name) for name in names]


def build_run(files: RunFiles) -> RunPlot:
    """Training and evaluation return (authored reward and the env's own) and the reward
    terms per rollout."""
    record = judged_run(files, IterationRecord(files.root))
    train, evals = scalars(files, record)
    returns = [
        *return_series(train, evals),
        column(evals, "mean_env_return", "step", "eval env return (env's own reward)", "markers"),
    ]
    panels = [
        Panel("Return per environment step", "episode return", returns, STEP_AXIS),
        Panel("Reward terms", "mean per step", term_series(train), STEP_AXIS),
    ]
    label = "reward space (one PPO run)"
    return RunPlot(files.root, "reward-run", label, panels)


SESSION_KIND = RunKind(
    name="reward",
    expected="metadata.json / loop_history.json + iter_N/ (langmarl p2p run)",
    empty="no iteration has a judgment or training scalars yet",
    detect=detect_session,
    build=build_session,
)
RUN_KIND = RunKind(
    name="reward-run",
    expected="metrics/scalars.jsonl or summary.json (one Prompt2Policy training run)",
    empty="metrics/scalars.jsonl has no row yet (the first rollout may still be running)",
    detect=detect_run,
    build=build_run,
)
