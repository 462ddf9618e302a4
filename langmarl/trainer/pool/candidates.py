"""Candidates of the pool search and the pure rules over them: the Pareto front, parent
selection, the best candidate and merges.

A candidate is a joint policy (every agent's policy text) with its scores on the run's
validation batch: one score per task (``task_scores``), their mean (``score``) and each
agent's mean credit (``agent_scores``, where the environment reports per-agent parts).

Decisions (as GEPA, Agrawal et al. 2025, adapted to teams):

- The front holds every candidate that is best on at least one validation task (ties: all
  of them), so a candidate that wins a single task survives even with a low mean.
- Among equal per-task scores, the candidate that is best on more tasks is preferred as a
  parent: a parent is drawn with probability proportional to the tasks it wins.
- The best candidate is the highest mean; ties go to the older one (fewer accidental
  switches between equally good policies).
- A merge takes, per agent, the policy of the parent whose agent scored higher on
  validation (the first parent on ties, or when the environment reports no per-agent
  parts, the parent with the higher mean).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from langmarl.core.records import AgentId, Policies
from langmarl.trainer.decisions import TeamScore

Origin = Literal["initial", "demonstration", "merge", "rewrite"]


class Candidate(BaseModel):
    """One joint policy in the pool (a line of ``pool.jsonl``)."""

    model_config = ConfigDict(extra="forbid")

    id: int
    """Its number in the run (0: the starting policies)."""
    iteration: int
    """The round that proposed it (the run's start iteration for the initial candidate)."""
    origin: Origin
    """How it was made."""
    parents: list[int]
    """The candidates it was made from."""
    policies: Policies
    """Every agent's policy text."""
    changed: list[AgentId] = []
    """Agents whose policy differs from the first parent's."""
    note: str = ""
    """What changed, in a few words (e.g. "key_word: added a demonstration")."""
    score: float | None = None
    """Mean validation reward (``None``: scoring failed)."""
    task_scores: list[float] = []
    """Validation reward per task, in batch order."""
    agent_scores: dict[AgentId, float] = {}
    """Each agent's mean credit on the validation batch (empty without per-agent parts)."""
    accepted: bool = True
    """Whether it joined the pool (scored at least as well as its first parent)."""
    reason: str = ""
    """Why it was accepted or refused."""


def pareto_front(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The accepted candidates that are best on at least one validation task, in pool
    order. With no per-task scores at all, the best by mean."""
    pool = [c for c in candidates if c.accepted and c.score is not None and c.task_scores]
    if not pool:
        return []
    tasks = min(len(c.task_scores) for c in pool)
    front: list[Candidate] = []
    for task in range(tasks):
        top = max(c.task_scores[task] for c in pool)
        front += [c for c in pool if c.task_scores[task] >= top and c not in front]
    return [c for c in pool if c in front]


def wins(candidate: Candidate, pool: Sequence[Candidate]) -> int:
    """Validation tasks on which ``candidate`` has the top score among ``pool``."""
    tasks = min(len(c.task_scores) for c in pool)
    return sum(
        candidate.task_scores[t] >= max(c.task_scores[t] for c in pool) for t in range(tasks)
    )


def select_parent(front: Sequence[Candidate], rng: random.Random) -> Candidate:
    """A front candidate, drawn with probability proportional to the tasks it wins.

    Raises:
        ValueError: if ``front`` is empty.
    """
    if not front:
        raise ValueError("the Pareto front is empty: score the initial candidate first")
    weights = [max(1, wins(c, front)) for c in front]
    return rng.choices(list(front), weights=weights, k=1)[0]


def best_candidate(candidates: Sequence[Candidate]) -> Candidate | None:
    """The accepted candidate with the highest mean (the oldest on ties)."""
    scored = [c for c in candidates if c.accepted and c.score is not None]
    if not scored:
        return None
    top = max(c.score or 0.0 for c in scored)
    return next(c for c in scored if (c.score or 0.0) >= top)


def merge_policies(first: Candidate, second: Candidate) -> tuple[Policies, list[AgentId]]:
    """Per agent, the policy of the parent whose agent scored higher (see the module
    docstring); returns the policies and the agents taken from ``second``."""
    merged: Policies = {}
    taken: list[AgentId] = []
    for agent_id, policy in first.policies.items():
        mine, theirs = first.agent_scores.get(agent_id), second.agent_scores.get(agent_id)
        if mine is None or theirs is None:
            mine, theirs = first.score or 0.0, second.score or 0.0
        if theirs > mine and agent_id in second.policies:
            merged[agent_id] = second.policies[agent_id]
            taken.append(agent_id)
        else:
            merged[agent_id] = policy
    return merged, taken


def merge_pair(
    front: Sequence[Candidate], rng: random.Random
) -> tuple[Candidate, Candidate] | None:
    """Two front candidates whose merge differs from both (``None`` when there is none)."""
    pairs = [(a, b) for a in front for b in front if a.id < b.id]
    rng.shuffle(pairs)
    for a, b in pairs:
        merged, taken = merge_policies(a, b)
        if taken and merged != b.policies:
            return a, b
    return None


def from_score(
    cid: int,
    iteration: int,
    origin: Any,
    parents: list[int],
    policies: Policies,
    scored: TeamScore,
    changed: list[str],
    note: str,
) -> Candidate:
    """A candidate with the validation score ``scored`` (accepted until :func:`gate` says
    otherwise; refused when it could not be scored)."""
    return Candidate(
        id=cid,
        iteration=iteration,
        origin=origin,
        parents=parents,
        policies=dict(policies),
        changed=changed,
        note=note,
        score=scored.score,
        task_scores=scored.rewards,
        agent_scores=scored.agent_scores,
        accepted=scored.score is not None,
        reason=scored.error or "",
    )


def gate(child: Candidate, parent: Candidate) -> Candidate:
    """The validated-update gate: a child joins the pool if it scores at least as well as
    its first parent on the same batch."""
    if child.score is None:
        return child.model_copy(update={"accepted": False, "reason": f"not scored: {child.reason}"})
    ok = parent.score is not None and child.score >= parent.score
    reason = f"{child.score:.3f} {'>=' if ok else '<'} parent {parent.id}'s {parent.score:.3f}"
    return child.model_copy(update={"accepted": ok, "reason": reason})
