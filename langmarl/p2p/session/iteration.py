"""Training one iteration of a session: its candidates (``LoopConfig.candidates``) trained
(several at once where the cores allow), each judged and checked as it finishes and its
numbers committed to the history, then the best kept as the iteration
(:mod:`~langmarl.p2p.design.candidates` holds the layout on disk).

::

    pending = candidates not judged yet         (outputs of an interrupted attempt removed)
    for each as it finishes training:           (train_each: threads, or one after another)
        judge and check it -> its numbers into the history, committed
    winner = the best score (the first on a tie) -> its files into iter_N
    the iteration's score, metrics line and history, committed
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langmarl.core.cpu import free_threads
from langmarl.p2p.design import candidates
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.session.contracts import (
    CandidateResult,
    IterationAggregation,
    IterationOutcome,
    IterationResult,
    LoopResult,
)
from langmarl.p2p.session.records import IterationRecord

if TYPE_CHECKING:
    from langmarl.p2p.session.loop import Session


def train_iteration(
    session: Session, step: IterationResult, it: IterationRecord
) -> IterationOutcome | None:
    """Train and judge ``step``'s candidates not judged yet, keep the best (:func:`keep_best`);
    None (the session's status error) if none trained."""
    if not step.candidates:  # a history written before the search: one candidate
        step.candidates = [CandidateResult(name="c_1", origin=step.reward_origin)]
    single = len(step.candidates) == 1
    for c in step.candidates:  # judged means its outcome is on disk; a failure is redone
        if c.error or candidates.record(it, c.name, single).read_outcome() is None:
            c.judged, c.score, c.interval, c.error = False, None, None, None
    pending = [c for c in step.candidates if not c.judged]
    trainer = session.trainer
    stop_leftovers = getattr(trainer, "stop_leftovers", None)
    seeds = list(session.config.seeds)

    def train(c: CandidateResult) -> tuple[IterationRecord, TrainConfig, IterationAggregation]:
        found = candidates.record(it, c.name, single)
        if stop_leftovers is not None:  # a trainer whose runs may outlive a killed session
            stop_leftovers(found)
        found.clear_outputs()
        config = found.read_inputs().config
        configs = session.config.train_configs(config)
        return found, config, trainer(found, found.reward_fn_path, configs, seeds)

    session.record.touch_heartbeat()
    interrupt = getattr(trainer, "interrupt", None)
    trained = candidates.train_each(pending, train, slots(session, len(pending)), interrupt)
    for c, (found, config, aggregation) in trained:
        record_candidate(session, c, session.judge_trained(found, config, aggregation), aggregation)
    return keep_best(session, step, it)


def slots(session: Session, pending: int) -> int:
    """Candidates trained at once (:func:`~langmarl.p2p.design.candidates.slots`)."""
    if pending <= 1:
        return 1
    config = session.config
    cores = config.max_parallel or free_threads()
    runs_each = max(len(config.configs), 1) * len(config.seeds)
    return candidates.slots(pending, runs_each, cores, config.backend)


def record_candidate(
    session: Session,
    c: CandidateResult,
    outcome: IterationOutcome | str,
    aggregation: IterationAggregation,
) -> None:
    """A trained candidate's numbers (or why it failed) into the history, committed."""
    c.judged = True
    session.result.ppo_steps += sum(run.steps_done for run in aggregation.runs.values())
    if isinstance(outcome, str):
        c.error = outcome
    else:
        c.score, c.mean_return = outcome.score, outcome.mean_return
        c.term_means = outcome.term_means
        c.interval = outcome.check.interval if outcome.check is not None else None
    session.record.touch_heartbeat()
    session.commit()


def keep_best(
    session: Session, step: IterationResult, it: IterationRecord
) -> IterationOutcome | None:
    """Make the best candidate the iteration (its files copied in when there are several,
    the candidates' numbers added to its measurements), its score the iteration's; commit.
    None (the session's status error) if none trained."""
    result = session.result
    winner = candidates.pick(step.candidates)
    if winner is None:
        errors = [f"{c.name}: {c.error}" for c in step.candidates]
        error = step.candidates[0].error if len(errors) == 1 else "; ".join(errors)
        step.error = result.error = error or "no candidate trained"
        result.status = "error"
        return None
    several = len(step.candidates) > 1
    if several:
        candidates.promote(it, candidates.record(it, winner.name, False))
    outcome = it.read_outcome()
    if outcome is None:
        raise RuntimeError(f"{it.path} has no outcome.json after its candidates were judged")
    if several:
        table = candidates.table(step.candidates, winner.name)
        outcome.measurements = f"{outcome.measurements}\n{table}".strip()
        it.save_outcome(outcome)
    step.winner, step.reward_origin = winner.name, winner.origin
    step.intent_score, step.mean_return = outcome.score, outcome.mean_return
    step.judged, step.error = True, None
    if outcome.check is not None:
        scored = "no_judge_score" not in outcome.judgment.failure_tags
        step.judge_score = outcome.judgment.intent_score if scored else None
        step.interval = outcome.check.interval
    track_best(result)
    session.record.record_iteration(
        step.iteration, step.intent_score, step.mean_return, result.best_score
    )
    session.commit()
    return outcome


def track_best(result: LoopResult) -> None:
    """Set ``best_iteration``/``best_score`` from the judged iterations (first best wins)."""
    judged = [s for s in result.iterations if s.intent_score is not None]
    best = max(judged, key=lambda s: s.intent_score or 0.0, default=None)
    result.best_iteration = best.iteration if best else None
    result.best_score = best.intent_score if best else None
