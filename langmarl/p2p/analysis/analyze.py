"""What a Prompt2Policy session did, read back from its records: a :class:`SessionAnalysis`
in ``analysis.json``.

::

    facts      = read_facts(record, history)     # per iteration: step, spec, summaries, rows
    iterations = iteration_changes(facts)        # origin, score, return, what changed
    terms      = term_stats(facts, threshold)    # per reward term across iterations
    plateaus   = find_plateaus(facts)            # intent score, mean return, eval returns
    dynamics   = run_dynamics(...) per iteration # :mod:`langmarl.p2p.analysis.dynamics`
    narrative  = narrate(analysis, llm)          # :mod:`langmarl.p2p.analysis.narrative`
    record.save_analysis(analysis)               # redacted like every session file

It runs at the end of every session (``LoopConfig.analyze``), from ``langmarl p2p analyze``
and from ``POST /api/runs/{id}/analyze`` (the p2p kind's ``analyze`` entry point,
:func:`analysis_events`).

Decisions:

* A term's *mean* in an iteration is its per-step mean at the final evaluation: the judged
  run's summary, or the mean over the runs (seeds) of a multi-run iteration.
* Its *spread* is the population standard deviation of that mean across the iteration's
  runs. A single run has no across-run spread, so the spread is then taken across the run's
  evaluation checkpoints (it mixes learning progress with noise; ``spread_over`` says which),
  and is None with a single checkpoint. Across iterations: the mean of those spreads.
* Its *trend* is the least-squares slope of its per-iteration means against the iteration
  number, ``flat`` within 5% of its largest magnitude (:func:`.dynamics.trend`).
* Its *share* is its part of the summed |term means| (:func:`guardrails.term_shares`),
  averaged over the iterations that have the term; it is *dominant* in the iterations where
  :func:`guardrails.dominant_term` names it at the session's ``dominance_threshold``.
* Plateaus are :func:`guardrails.plateau` as the loop applies it (the last 3 values within
  5%): the intent score and the mean return across iterations, and the evaluation returns
  within each iteration. Fewer than 3 values are never a plateau.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ValidationError

from langmarl.p2p.analysis.dynamics import run_dynamics, slope, trend
from langmarl.p2p.analysis.models import (
    BestIteration,
    IterationChange,
    Plateau,
    SessionAnalysis,
    TermIteration,
    TermStats,
)
from langmarl.p2p.analysis.narrative import narrate
from langmarl.p2p.session.contracts import (
    IterationResult,
    LoopResult,
    TrainSummary,
)
from langmarl.p2p.session.guardrails import dominant_term, plateau, term_shares
from langmarl.p2p.session.records import IterationRecord, SessionRecord

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

logger = logging.getLogger(__name__)

__all__ = [  # the records live in analysis_models; importing them from here keeps working
    "BestIteration", "IterationChange", "Plateau", "SessionAnalysis", "TermIteration",
    "TermStats", "analysis_events", "analysis_steps", "analyze_finished", "analyze_session",
]  # fmt: skip

STEPS = ("iterations", "terms", "plateaus", "dynamics", "narrative")
"""The analysis steps, in the order :func:`analysis_steps` yields them (then ``analysis``)."""


@dataclass
class IterationFacts:
    """What the analysis reads of one iteration."""

    step: IterationResult
    source: str = ""
    terms: list[str] = field(default_factory=list)
    """The reward's declared terms (its summary's when it declares none)."""
    summary: TrainSummary | None = None
    runs: dict[str, TrainSummary] = field(default_factory=dict)
    """Every finished run's summary (several for a multi-run iteration)."""
    run: str = ""
    """The judged run's directory, relative to the session."""
    train_rows: list[dict[str, Any]] = field(default_factory=list)


def _step(it: IterationRecord, number: int) -> IterationResult:
    """An iteration's history entry rebuilt from its files (a session without history)."""
    outcome, summary = it.read_outcome(), it.read_summary()
    judgment = it.read_judgment()
    return IterationResult(
        iteration=number, iteration_id=it.iteration_id, reward_origin=it.read_reward_spec().origin,
        intent_score=judgment.intent_score if judgment else None,
        mean_return=outcome.mean_return if outcome else (
            summary.final_episodic_return if summary else None),
    )  # fmt: skip


def iteration_facts(session: Path, it: IterationRecord, step: IterationResult) -> IterationFacts:
    """The facts of iteration ``it`` (``step``: its history entry)."""
    summary, aggregation = it.read_summary(), it.read_aggregation()
    judged = it.judged_run(aggregation)
    terms = list(it.read_reward_spec().terms) or list(summary.term_means if summary else [])
    return IterationFacts(
        step=step, source=it.read_reward_source(), terms=terms, summary=summary,
        runs=dict(aggregation.runs) if aggregation else {},
        run=judged.path.relative_to(session).as_posix(), train_rows=judged.parse_scalars()[0],
    )  # fmt: skip


def read_history(record: SessionRecord) -> LoopResult:
    """The session's ``loop_history.json``, read leniently: an entry this version cannot
    read is left out (its iteration's files stand in for it), a missing file is empty."""
    data = record.read_history() or {}
    steps = []
    for item in data.get("iterations") or []:
        try:
            steps.append(IterationResult.model_validate(item))
        except ValidationError:
            continue
    status = data.get("status") or (record.read_status() or {}).get("status") or "pending"
    return LoopResult.model_construct(
        session_id=record.session_id, prompt="", env_id="", status=status, iterations=steps
    )


def read_facts(record: SessionRecord, history: LoopResult | None = None) -> list[IterationFacts]:
    """Every iteration's facts, in order (``history``: the session's, default its file's)."""
    steps = {s.iteration: s for s in (history or read_history(record)).iterations}
    facts = []
    for it in record.iteration_records():
        number = it.iteration_id.removeprefix("iter_")
        if not number.isdigit():  # not an iteration directory (iter_old, say)
            continue
        step = steps.get(int(number)) or _step(it, int(number))
        facts.append(iteration_facts(record.path, it, step))
    return facts


def iteration_changes(facts: list[IterationFacts]) -> list[IterationChange]:
    """Per iteration: its result, and what changed from the one before."""
    changes = []
    for index, now in enumerate(facts):
        step = now.step
        change = IterationChange(
            iteration=step.iteration, origin=step.reward_origin, intent_score=step.intent_score,
            mean_return=step.mean_return, error=step.error,
        )  # fmt: skip
        if index:
            before = facts[index - 1]
            change.reward_changed = now.source != before.source
            change.terms_added = [t for t in now.terms if t not in before.terms]
            change.terms_removed = [t for t in before.terms if t not in now.terms]
            change.hp_changes = dict(before.step.hp_changes)
            change.score_delta = _delta(step.intent_score, before.step.intent_score)
            change.return_delta = _delta(step.mean_return, before.step.mean_return)
        changes.append(change)
    return changes


def _delta(now: float | None, before: float | None) -> float | None:
    return None if now is None or before is None else now - before


def best_iteration(changes: list[IterationChange]) -> BestIteration:
    """The first iteration with the highest intent score, and the one with the highest
    mean return."""
    judged = [c for c in changes if c.intent_score is not None]
    best = max(judged, key=lambda c: c.intent_score or 0.0, default=None)
    returns = [c for c in changes if c.mean_return is not None]
    top = max(returns, key=lambda c: c.mean_return or 0.0, default=None)
    if best is None:
        return BestIteration(by_return=top.iteration if top else None)
    return BestIteration(
        iteration=best.iteration, intent_score=best.intent_score, mean_return=best.mean_return,
        by_return=top.iteration if top else None,
    )  # fmt: skip


def iteration_terms(facts: IterationFacts, threshold: float) -> dict[str, TermIteration]:
    """Mean, spread, share and dominance of each term in one iteration (see the module
    docstring for what the spread is)."""
    if len(facts.runs) > 1:
        summaries = list(facts.runs.values())
        over: Literal["runs", "checkpoints"] = "runs"
    elif facts.summary is not None:
        summaries = [facts.summary]
        over = "checkpoints"
    else:
        return {}
    names = sorted({name for s in summaries for name in s.term_means})
    means = {n: float(np.mean([s.term_means[n] for s in summaries if n in s.term_means]))
             for n in names}  # fmt: skip
    shares = term_shares(means)
    top = max(shares, key=lambda n: shares[n]) if dominant_term(means, threshold) else None
    found = {}
    for name in names:
        if over == "runs":
            values = [s.term_means[name] for s in summaries if name in s.term_means]
        else:
            values = [c.term_means[name] for c in summaries[0].checkpoints if name in c.term_means]
        spread = float(np.std(values)) if len(values) > 1 else None
        found[name] = TermIteration(
            iteration=facts.step.iteration, mean=means[name], spread=spread,
            spread_over=over if spread is not None else None, share=shares[name],
            dominant=name == top,
        )  # fmt: skip
    return found


def term_stats(facts: list[IterationFacts], threshold: float) -> list[TermStats]:
    """Each reward term across the iterations, by name (first seen first)."""
    rows: dict[str, list[TermIteration]] = {}
    for iteration in facts:
        for name, row in iteration_terms(iteration, threshold).items():
            rows.setdefault(name, []).append(row)
    stats = []
    for name, per in rows.items():
        xs, means = [r.iteration for r in per], [r.mean for r in per]
        spreads = [r.spread for r in per if r.spread is not None]
        stats.append(TermStats(
            name=name, iterations=per, mean=float(np.mean(means)),
            spread=float(np.mean(spreads)) if spreads else None, slope=slope(xs, means, per=1.0),
            trend=trend(xs, means), share=float(np.mean([r.share for r in per])),
            dominant_in=[r.iteration for r in per if r.dominant],
        ))  # fmt: skip
    return stats


def find_plateaus(facts: list[IterationFacts]) -> list[Plateau]:
    """Plateaus of the intent score and the mean return across iterations, and of the
    evaluation returns within each iteration (:func:`guardrails.plateau`, as the loop)."""
    found = []
    for series in ("intent_score", "mean_return"):
        points = [(f.step.iteration, getattr(f.step, series)) for f in facts]
        points = [(i, v) for i, v in points if v is not None]
        message = plateau([v for _, v in points])
        if message:
            found.append(Plateau(series=series, iteration=points[-1][0], message=message))
    for f in facts:
        returns = [c.mean_return for c in f.summary.checkpoints] if f.summary else []
        message = plateau(returns)
        if message:
            found.append(Plateau(series="eval_return", iteration=f.step.iteration, message=message))
    return found


def dominance_threshold(record: SessionRecord) -> float:
    """The session's ``dominance_threshold`` (``run.json``'s config; else the default)."""
    try:
        config = (record.run.read() or {}).get("config") or {}
    except (OSError, ValueError):  # an unreadable run.json: the default, as for no config
        config = {}
    value = config.get("dominance_threshold")
    default = SessionAnalysis.model_fields["dominance_threshold"].default
    return float(value) if isinstance(value, int | float) else float(default)


def analysis_steps(
    record: SessionRecord,
    *,
    llm: LLMClient | None = None,
    history: LoopResult | None = None,
    threshold: float | None = None,
) -> Iterator[tuple[str, Any]]:
    """The analysis one step at a time: ``(step, result)`` for each of :data:`STEPS` as it
    completes, then ``("analysis", SessionAnalysis)`` once ``analysis.json`` is written.

    Args:
        record: The session.
        llm: Writes the narrative (None: the rule-based narrative).
        history: The session's result (default: its ``loop_history.json``; the loop passes
            its own, whose final status is not on disk yet).
        threshold: Dominance threshold (default: the session's config).
    """
    history = history or read_history(record)
    facts = read_facts(record, history)
    analysis = SessionAnalysis(
        session_id=record.session_id,
        status=history.status,
        dominance_threshold=threshold if threshold is not None else dominance_threshold(record),
    )
    analysis.iterations = iteration_changes(facts)
    analysis.best = best_iteration(analysis.iterations)
    analysis.origins = dict(Counter(c.origin for c in analysis.iterations))
    yield "iterations", {"iterations": analysis.iterations, "best": analysis.best}
    analysis.terms = term_stats(facts, analysis.dominance_threshold)
    yield "terms", analysis.terms
    analysis.plateaus = find_plateaus(facts)
    yield "plateaus", analysis.plateaus
    analysis.dynamics = [
        run_dynamics(f.step.iteration, f.run, f.train_rows) for f in facts if f.train_rows
    ]
    yield "dynamics", analysis.dynamics
    narrate(analysis, llm)
    yield "narrative", {k: getattr(analysis, k) for k in ("narrative", "narrative_source",
                                                          "narrative_note")}  # fmt: skip
    record.save_analysis(analysis.model_dump(mode="json"))
    yield "analysis", analysis


def analyze_session(
    record: SessionRecord,
    *,
    llm: LLMClient | None = None,
    history: LoopResult | None = None,
    threshold: float | None = None,
) -> SessionAnalysis:
    """Run every step of :func:`analysis_steps`; the analysis (also in ``analysis.json``)."""
    for _, result in analysis_steps(record, llm=llm, history=history, threshold=threshold):
        if isinstance(result, SessionAnalysis):  # the last step
            return result
    raise AssertionError("analysis_steps ended without its analysis")  # pragma: no cover


def analysis_events(run_dir: Path) -> Iterator[tuple[str, Any]]:
    """The p2p kind's ``analyze`` entry point: :func:`analysis_steps` of the session in
    ``run_dir`` (rule-based narrative), each result as JSON-ready data."""
    for name, result in analysis_steps(SessionRecord(run_dir)):
        yield name, _plain(result)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def analyze_finished(
    record: SessionRecord, result: LoopResult, llm: LLMClient | None, threshold: float
) -> SessionAnalysis:
    """The analysis at the end of a session, recorded as the ``analyzed`` event.

    Never raises an ``Exception``: a failure is logged and recorded (``error`` in the
    analysis and in the event), and the session's status stays what it was.
    """
    try:
        analysis = analyze_session(record, llm=llm, history=result, threshold=threshold)
    except Exception as exc:  # the analysis must never fail the session it describes
        logger.exception("analysis of session %s failed", record.session_id)
        analysis = SessionAnalysis(
            session_id=record.session_id, status=result.status, dominance_threshold=threshold,
            error=f"{type(exc).__name__}: {exc}",
        )  # fmt: skip
        _try(lambda: record.save_analysis(analysis.model_dump(mode="json")), "save")
    _try(lambda: record.run.event(
        "analyzed", file=record.analysis_path.name, best_iteration=analysis.best.iteration,
        flags=analysis.flags(), narrative_source=analysis.narrative_source,
        error=analysis.error,
    ), "record")  # fmt: skip
    return analysis


def _try(action: Callable[[], object], what: str) -> None:
    try:
        action()
    except Exception:  # disk trouble while recording it: logged, the session goes on
        logger.exception("could not %s the session analysis", what)
