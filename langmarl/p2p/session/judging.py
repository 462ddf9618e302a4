"""Judging what an iteration trained: the judges on its judged run, one judgment from their
verdicts, the session's check, and the plateau of scores across iterations.

::

    run        = it.judged_run(aggregation)        # the median seed of the best config
    scores     = judges(trajectory, video, summary) # code / summary / VLM (agents.judge)
    judgment   = synthesize(scores, guardrails)     # agents.synthesis
    check      = the session's check on the run     # design.checks (decides when set)
    plateau    = the last 3 scores within 5%        # a warning and a failure tag

Each step is a ``trained`` / ``judged`` / ``checked`` event in the session's log, and the
iteration ends with ``judgment.json``, ``outcome.json`` and status ``completed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langmarl.p2p.agents import judge
from langmarl.p2p.agents.synthesis import synthesize
from langmarl.p2p.design import checks
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.session.contracts import (
    IterationAggregation,
    IterationOutcome,
    JudgeScore,
    JudgmentResult,
    TrainSummary,
)
from langmarl.p2p.session.guardrails import check_guardrails, plateau
from langmarl.p2p.session.records import IterationRecord

if TYPE_CHECKING:
    from langmarl.p2p.session.loop import Session


def judge_trained(
    session: Session, it: IterationRecord, config: TrainConfig, aggregation: IterationAggregation
) -> IterationOutcome | str:
    """Judge (and check) what ``it`` trained; an error message if no run finished."""
    if not aggregation.runs:
        error = "; ".join(f"{k}: {v}" for k, v in aggregation.errors.items()) or "no runs"
        it.set_status("error", error)
        return f"training failed: {error}"
    run = it.judged_run(aggregation)
    summary = run.read_summary() or aggregation.runs[aggregation.best_run or ""]
    path = run.trajectory_path
    trajectory = judge.load_trajectory(path) if path and path.suffix == ".npz" else {}
    warnings = check_guardrails(
        summary.term_means,
        [c.mean_return for c in summary.checkpoints],
        session.config.dominance_threshold,
    )
    scores = _scores(session, run, summary, trajectory)
    session.record.run.event(
        "trained", iteration=it.iteration_id, runs=sorted(aggregation.runs),
        mean_return=aggregation.mean_return, errors=aggregation.errors,
        term_means=summary.term_means, warnings=warnings,
    )  # fmt: skip
    judgment = _judgment(session, it, scores, warnings)
    measurements = (
        judge.measurements_text(judge.trajectory_summary(trajectory)) if trajectory else ""
    )
    outcome = IterationOutcome(
        judgment=judgment, term_means=summary.term_means, measurements=measurements,
        mean_return=aggregation.mean_return, check=session.run_check(it, path, config),
    )  # fmt: skip
    if outcome.check is not None:
        outcome.measurements = f"{checks.describe(outcome.check)}\n{measurements}".strip()
    _mark_plateau(session, judgment, outcome)
    it.save_judgment(judgment)
    it.save_outcome(outcome)
    it.set_status("completed")
    return outcome


def _scores(
    session: Session, run: IterationRecord, summary: TrainSummary, trajectory: dict[str, Any]
) -> list[JudgeScore]:
    """Every judge's score of the judged run (a code judge that could not be written is
    recorded too, so the judgment says which judges ran)."""
    videos = summary.checkpoints[-1].videos if summary.checkpoints else {}
    video = run.video(videos["median"]) if "median" in videos else None
    scores = judge.judge_run(
        session.llm, session.intent, session.result.criteria, session.spec, trajectory,
        judge_code=session.judge_code, use_summary=session.writes(session.config.summary_judge),
        vlm=session.vlm, video=video, workers=session.config.judge_workers,
    )  # fmt: skip
    problem = session.result.judge_code_problem
    if problem:
        scores.append(JudgeScore(judge="code", reason=problem[:300]))
    return scores


def _judgment(
    session: Session, it: IterationRecord, scores: list[JudgeScore], warnings: list[str]
) -> JudgmentResult:
    """One judgment from the scores, by the session's synthesis, as a ``judged`` event."""
    config = session.config
    judgment = synthesize(
        scores, warnings, config.pass_threshold, config.synthesis,
        llm=session.llm, intent=session.intent, criteria=session.result.criteria,
    )  # fmt: skip
    session.record.run.event(
        "judged", iteration=it.iteration_id, intent_score=judgment.intent_score,
        passed=judgment.passed, synthesis=judgment.synthesis,
        judges=[s.model_dump() for s in judgment.judges], tags=judgment.failure_tags,
    )  # fmt: skip
    return judgment


def _mark_plateau(session: Session, judgment: JudgmentResult, outcome: IterationOutcome) -> None:
    """Warn (and tag the judgment) when the last three scores, this one included, are flat."""
    past = [s.intent_score for s in session.result.iterations if s.intent_score is not None]
    current = [] if outcome.score is None else [outcome.score]
    stalled = plateau([*past, *current], window=3, rel_tol=0.05)
    if stalled:
        judgment.warnings.append(f"intent score {stalled}")
        judgment.failure_tags.append("intent_plateau")
