"""Where an iteration's candidates come from (``LoopConfig.author``): the search over the
env's term catalog (structured: the model ranks the objectives; random: the control, no
model; :mod:`~langmarl.p2p.design.search`), or a model writing code (free-form: it authors
the first rewards, then revises the last iteration's, each validated and fixed, with the
fallback template when none validates)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from langmarl.p2p.agents import author, reviser
from langmarl.p2p.design import candidates, demonstrations, search, structured
from langmarl.p2p.design.catalog import compile_for_env
from langmarl.p2p.design.proposals import Proposal
from langmarl.p2p.reward.validation import reward_spec
from langmarl.p2p.session.contracts import IterationOutcome, RewardOrigin
from langmarl.p2p.session.records import IterationInputs

if TYPE_CHECKING:
    from langmarl.p2p.session.loop import Session


def designs(session: Session) -> bool:
    """Whether the search composes the rewards from the env's catalog (the structured or
    random author, ``LoopConfig.author``) rather than a model writing code."""
    if session.config.author == "auto":
        return session.llm.ranks_options
    return session.config.author in ("structured", "random")


def designed(session: Session, number: int) -> list[IterationInputs]:
    """Iteration ``number``'s candidates from the catalog (:func:`~langmarl.p2p.design.
    search.propose`): the model's order of the objectives (ranked on first use and kept
    in ``result.objectives``) or random draws, and variants of the best so far."""
    env_id, config, result = session.spec.env_id, session.config, session.result
    if config.author != "random" and not result.objectives:
        ranked = structured.rank_objectives(session.llm, session.intent, env_id)
        result.objectives = [o.name for o, _ in ranked]
    draw_seed = f"{session.intent}|{config.seeds[0]}|{number}"
    fresh, origin = search.fresh(config.author, env_id, result.objectives, draw_seed)
    tried = candidates.tried(session.record, result)
    picked = search.propose(config.candidates, tried, fresh, config.pass_threshold)
    return [compiled(session, p, origin if how == "fresh" else "variant") for p, how in picked]


def compiled(session: Session, proposal: Proposal, origin: RewardOrigin) -> IterationInputs:
    """``proposal`` compiled to reward code and validated (the catalog's own code: a
    failure is a bug, said as one)."""
    source = compile_for_env(proposal)
    validation = session.validator(source, session.spec.env_id)
    if not validation.ok:
        raise RuntimeError(f"compiled proposal {proposal.describe()!r} failed validation: "
                           f"{validation.message()}")  # fmt: skip
    spec = reward_spec(validation, origin).model_copy(update={"proposal": proposal.model_dump()})
    return IterationInputs(source, spec, session.config.train_config())


def written(
    session: Session, produce: Callable[[], IterationInputs | None]
) -> list[IterationInputs]:
    """Up to ``candidates`` rewards from a model writing code: ``produce`` called again
    while it yields new code; no more once it repeats itself or falls back (the model's
    code did not validate: another try at the same prompt costs calls and rarely
    differs)."""
    found: list[IterationInputs] = []
    while len(found) < session.config.candidates:
        one = produce()
        if one is None or any(one.source == f.source for f in found):
            break
        found.append(one)
        if one.spec.origin in ("fallback", "previous"):
            break
    return found


def first_reward(session: Session) -> IterationInputs | None:
    """An authored reward (written after the demonstrations most like the intent: origin
    ``demonstration`` when it is a close copy of one), the fallback template, or None
    (-> invalid_code)."""
    settings = session.config
    shown = demonstrations.choose(session.intent, session.spec.env_id,
                                  settings.demonstrations, session.record.path.parent)  # fmt: skip
    authored = author.author_reward(
        session.llm, session.intent, session.result.criteria, session.spec,
        do_review=settings.review, max_fix_attempts=settings.max_fix_attempts,
        validator=session.validator, demos=shown,
    )  # fmt: skip
    session.last_errors = authored.errors
    config = session.config.train_config()
    if authored.source is not None and authored.validation is not None:
        copied = demonstrations.adapted_from(authored.source, shown)
        origin: RewardOrigin = "author" if copied is None else "demonstration"
        return IterationInputs(authored.source, reward_spec(authored.validation, origin), config)
    session.result.error = "no authored reward validated: " + " | ".join(authored.errors[-3:])
    if session.config.fallback == "none":
        return None
    source = author.fallback_reward(session.spec)
    validation = session.validator(source, session.spec.env_id)
    if not validation.ok:
        return None
    return IterationInputs(source, reward_spec(validation, "fallback"), config)


def next_reward(session: Session, inputs: IterationInputs, outcome: IterationOutcome) -> tuple[
    IterationInputs, dict[str, float]
]:  # fmt: skip
    """A revision of the current reward (the model may first look back at iterations
    1..current through the reviser's tools), where an invalid revision keeps the current
    reward (origin "previous")."""
    current = session.result.iterations[-1].iteration
    lookback = reviser.Lookback(session.record, current, images=session.llm.config.is_multimodal)
    revision = reviser.revise(
        session.llm, intent=session.intent, code=inputs.source, judgment=outcome.judgment,
        term_means=outcome.term_means, measurements=outcome.measurements,
        config=inputs.config, spec=session.spec, hp_tuning=session.config.hp_tuning,
        lookback=lookback, tool_rounds=session.config.reviser_tool_rounds,
    )  # fmt: skip
    config = reviser.apply_hp_changes(inputs.config, revision.hp_changes)
    session.last_errors = [revision.notes] if revision.notes else []
    session.record.run.event(
        "revised", code=revision.reward_code is not None, hp_changes=revision.hp_changes,
        rejected=revision.rejected, notes=revision.notes,
        tool_protocol=revision.tool_protocol,
        tool_calls=[call.model_dump() for call in revision.tool_calls],
    )  # fmt: skip
    if revision.reward_code:
        fixed = author.validate_and_fix(
            session.llm, revision.reward_code, session.spec,
            max_fix_attempts=session.config.max_fix_attempts, validator=session.validator,
        )  # fmt: skip
        session.last_errors = fixed.errors
        if fixed.source is not None and fixed.validation is not None:
            spec = reward_spec(fixed.validation, "revision")
            return IterationInputs(fixed.source, spec, config), revision.hp_changes
    kept = inputs.spec.model_copy(update={"origin": "previous"})
    return IterationInputs(inputs.source, kept, config), revision.hp_changes


def propose(
    session: Session, number: int, inputs: IterationInputs | None = None,
    outcome: IterationOutcome | None = None,
) -> tuple[list[IterationInputs], dict[str, float]]:  # fmt: skip
    """Iteration ``number``'s candidates (empty: none to train) and the reviser's
    hyperparameter changes: from the catalog when the search designs the rewards, else
    what the model writes (iteration 1) or revises from ``inputs`` and ``outcome``."""
    if designs(session):
        return designed(session, number), {}
    if number == 1 or inputs is None or outcome is None:
        return written(session, lambda: first_reward(session)), {}
    last, judged = inputs, outcome
    changes: dict[str, float] = {}

    def revised() -> IterationInputs:
        one, hp = next_reward(session, last, judged)
        if not changes:  # the first revision's: what the history records for the iteration
            changes.update(hp)
        return one

    return written(session, revised), changes
