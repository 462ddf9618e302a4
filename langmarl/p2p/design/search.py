"""The candidates of a search iteration (issue 38, after Eureka's K reward samples per
iteration with "reward reflection"): proposals over the env's catalog, made without writing
code, so a small model's part is only the ranking.

Where they come from (``LoopConfig.author``)::

    structured  iteration 1: the model's top-K objectives (:mod:`~.structured`);
                then variants of the best candidate so far and the objectives not yet
                tried, in the model's order
    random      the control: K proposals drawn at random from the catalog (no model);
                then variants of the best so far and fresh draws

A **variant** is a rule on the best candidate's per-term training statistics (its
``term_means``): when the body's shaping outweighs the objective, the heaviest shaping term
goes; the objective's weight ×3 and ×1/3 against the shaping. So the numbers of every
trained candidate steer the next proposals. Whether variants or new objectives come first
depends on the best score so far: at half the pass threshold or more, the search refines;
below it, it looks elsewhere. A candidate whose compiled code was trained already is never
proposed again.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from langmarl.p2p.design.catalog import SHAPING, objective_proposal, objectives, quantities
from langmarl.p2p.design.proposals import Component, Form, Proposal
from langmarl.p2p.session.contracts import RewardOrigin

DRAWN_FORMS: tuple[Form, ...] = ("linear", "abs", "square")
DRAWN_WEIGHTS = (0.5, 1.0, 2.0)
MAX_DRAWS = 200
"""Fresh proposals looked at per iteration at most (random draws repeat on small catalogs)."""


@dataclass(frozen=True)
class Tried:
    """A trained candidate as the search sees it: its proposal, per-term means and score."""

    proposal: Proposal
    term_means: dict[str, float] = field(default_factory=dict)
    score: float | None = None


def is_shaping(env_id: str, component: Component) -> bool:
    """Whether ``component`` is one of the body's shaping terms (:data:`~.catalog.SHAPING`)
    rather than part of the objective."""
    return any(s.quantity == component.quantity and s.form == component.form
               for s in SHAPING[env_id])  # fmt: skip


def _scaled(proposal: Proposal, factor: float, label: str) -> Proposal:
    components = [
        c if is_shaping(proposal.env_id, c) else c.model_copy(update={"weight": c.weight * factor})
        for c in proposal.components
    ]
    return proposal.model_copy(update={"components": components, "objective": label})


def variants(tried: Tried) -> list[Proposal]:
    """Rule-made variants of ``tried``'s proposal, the one its statistics favour first.

    The objective's weight is the size of its terms' per-step means, the shaping's alike:
    when the shaping weighs more, dropping its heaviest term comes first (a hopper that
    learned to stand for its healthy bonus); the objective ×3 and ×1/3 follow.
    """
    proposal, means = tried.proposal, tried.term_means
    env_id, name = proposal.env_id, proposal.objective or "proposal"
    shaping = [c for c in proposal.components if is_shaping(env_id, c)]
    own = [c for c in proposal.components if not is_shaping(env_id, c)]
    own_size = sum(abs(means.get(c.term, 0.0)) for c in own)
    found = [_scaled(proposal, 3.0, f"{name} x3"), _scaled(proposal, 1 / 3, f"{name} x1/3")]
    heaviest = max(shaping, key=lambda c: abs(means.get(c.term, 0.0)), default=None)
    if heaviest is not None and own and abs(means.get(heaviest.term, 0.0)) > own_size:
        kept = [c for c in proposal.components if c is not heaviest]
        label = f"{name} without {heaviest.quantity}"
        found.insert(0, proposal.model_copy(update={"components": kept, "objective": label}))
    return found


def random_proposal(rng: random.Random, env_id: str) -> Proposal:
    """One or two components drawn from ``env_id``'s catalog (a quantity, a form, a signed
    weight; no ``alive``), then the body's shaping: what random search trains."""
    names = sorted(set(quantities(env_id)) - {"alive"})
    drawn: list[Component] = []
    for quantity in rng.sample(names, k=min(len(names), rng.choice((1, 2)))):
        form = rng.choice(DRAWN_FORMS)
        weight = rng.choice(DRAWN_WEIGHTS)
        if form == "linear" and rng.random() < 0.5:
            weight = -weight
        drawn.append(Component(quantity, form, weight))
    terms = {c.term for c in drawn}
    shaping = [c for c in SHAPING[env_id] if c.term not in terms]
    return Proposal(env_id=env_id, objective="random", components=[*drawn, *shaping])


def draws(rng: random.Random, env_id: str) -> Iterator[Proposal]:
    """Random proposals for ``env_id`` without end (:func:`random_proposal`)."""
    while True:
        yield random_proposal(rng, env_id)


def key(proposal: Proposal) -> str:
    """What makes two proposals the same reward: their components (not their labels)."""
    return json.dumps([c.model_dump() for c in proposal.components], sort_keys=True)


def best_tried(tried: Iterable[Tried]) -> Tried | None:
    """The tried candidate with the highest score (the first on a tie; unscored last)."""
    scored = [t for t in tried if t.score is not None]
    return max(scored, key=lambda t: t.score or 0.0, default=None)


def propose(
    k: int, tried: list[Tried], fresh: Iterator[Proposal], threshold: float
) -> list[tuple[Proposal, str]]:
    """Up to ``k`` proposals none of ``tried`` has, each with where it came from
    (``variant``, else ``fresh``): variants of the best tried first when it scored
    ``threshold / 2`` or more, else the ``fresh`` ones first (the model's next objectives,
    or random draws)."""
    best = best_tried(tried)
    refine = [] if best is None else variants(best)
    refine_first = best is not None and (best.score or 0.0) >= threshold / 2
    sources = [(iter(refine), "variant"), (itertools.islice(fresh, MAX_DRAWS), "fresh")]
    if not refine_first:
        sources.reverse()
    seen = {key(t.proposal) for t in tried}
    picked: list[tuple[Proposal, str]] = []
    for source, origin in sources:
        for proposal in source:
            if len(picked) == k:
                return picked
            same = key(proposal)
            if same not in seen:
                seen.add(same)
                picked.append((proposal, origin))
    return picked


def fresh(
    author: str, env_id: str, ranked: list[str], draw_seed: str
) -> tuple[Iterator[Proposal], RewardOrigin]:
    """The search's new proposals and their origin: random draws (seeded by ``draw_seed``)
    for the ``random`` author, else ``env_id``'s objectives in the model's order
    (``ranked`` names)."""
    if author == "random":
        return draws(random.Random(draw_seed), env_id), "random"
    by_name = {o.name: o for o in objectives(env_id)}
    return iter([objective_proposal(env_id, by_name[name]) for name in ranked]), "structured"
