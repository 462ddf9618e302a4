"""Records and pure rules of validated updates: one decision per candidate policy, team
scores, the winner among candidates and the accept/reject verdict; ``updates.jsonl``.

See :mod:`langmarl.trainer.validation` for how they are used.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import ConfigError
from langmarl.core.records import AgentId, PolicyUpdate
from langmarl.store import LocalStore

Kind = Literal["rewrite", "append", "kept", "demonstration", "merge"]


class UpdateDecision(BaseModel):
    """What happened to one candidate policy (one line of ``updates.jsonl``).

    Attributes:
        iteration: The training iteration that proposed it.
        agent_id: The agent.
        candidate: Its index among the agent's candidates of that iteration.
        kind: How it was made: ``rewrite``, ``append``, ``kept`` (no candidate), or by the
            pool search, ``demonstration`` or ``merge``.
        policy: The candidate policy text.
        score: Its validation score (``None``: not scored).
        incumbent_score: The current policies' score it was compared with.
        accepted: Whether it replaced the agent's policy.
        reason: Why (scores, a failure, "identical to the current policy", ...).
        error: Why the optimizer fell back (e.g. from rewrite to append), if it did.
    """

    model_config = ConfigDict(extra="forbid")

    iteration: int
    agent_id: AgentId
    candidate: int
    kind: Kind
    policy: str
    score: float | None = None
    incumbent_score: float | None = None
    accepted: bool
    reason: str
    error: str | None = None


class TeamScore(BaseModel):
    """A team's validation score.

    Attributes:
        score: Mean reward over the batch (``None`` when scoring failed).
        rewards: Reward per batch task.
        agent_scores: Each agent's mean credit over the batch, where every episode reports
            per-agent parts (``metadata["agent_rewards"]``); else empty.
        error: Why scoring failed.
        episodes_run: Episodes played for this score (0 when it came from the cache).
    """

    score: float | None = None
    rewards: list[float] = []
    agent_scores: dict[str, float] = {}
    error: str | None = None
    episodes_run: int = 0


class Selection(BaseModel):
    """The outcome of one iteration's validated update (see the module docstring)."""

    policies: dict[AgentId, str]
    score: float | None
    updates: list[PolicyUpdate]
    decisions: list[UpdateDecision]
    episodes_run: int


def digest(data: Any) -> str:
    """A short, stable hash of JSON-able ``data``."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def pick_winner(scores: list[TeamScore]) -> int | None:
    """Index of the highest score (the first on ties); failed scorings never win."""
    best: int | None = None
    for index, scored in enumerate(scores):
        if scored.score is None:
            continue
        if best is None or scored.score > (scores[best].score or 0.0):
            best = index
    return best


def verdict(candidate: TeamScore, incumbent: TeamScore) -> tuple[bool, str]:
    """Accept ``candidate`` over ``incumbent``? (pure) and why."""
    if incumbent.score is None:
        return False, f"the current policies could not be scored: {incumbent.error}"
    if candidate.score is None:
        return False, f"validation failed: {candidate.error}"
    if candidate.score >= incumbent.score:
        return True, f"scored {candidate.score:.3f} >= current {incumbent.score:.3f}"
    return False, f"scored {candidate.score:.3f} < current {incumbent.score:.3f}"


def training_task_count(env: BaseEnvironment) -> int | None:
    """How many training tasks ``env`` has (``None``: unbounded, e.g. generated tasks)."""
    if env.splits is None or "train" not in env.splits:
        return None
    return len(env.splits["train"])


def check_validation_size(env: BaseEnvironment, size: int) -> None:
    """Refuse a validation batch larger than the environment's training tasks.

    Raises:
        ConfigError: naming ``validation_size``, the task count and the fix.
    """
    available = training_task_count(env)
    if available is not None and size > available:
        raise ConfigError(
            f"validation_size={size} is larger than the {available} training tasks of "
            f"environment {env.name!r}: set validation_size "
            f"to at most {available}, use a bigger task set (benchmark_path), or set "
            "validate_updates=false to accept every update unvalidated."
        )


def unvalidated_decisions(iteration: int, updates: list[PolicyUpdate]) -> list[UpdateDecision]:
    """The decisions of ``validate_updates=false``: every update is accepted (pure)."""
    return [
        UpdateDecision(
            iteration=iteration,
            agent_id=u.agent_id,
            candidate=0,
            kind=u.method,
            policy=u.new_policy,
            accepted=u.method != "kept",
            reason="validate_updates is off: every update is accepted"
            if u.method != "kept"
            else f"no candidate: {u.error or 'no gradient for this agent'}",
            error=u.error,
        )
        for u in updates
    ]


class DecisionLog:
    """``updates.jsonl`` of a run: every update decision, each recorded once (a resumed
    iteration re-makes the decisions of the interrupted attempt; they are not repeated).

    Args:
        store: The run's store.
        run_id: The run.
    """

    def __init__(self, store: LocalStore, run_id: str) -> None:
        self.store, self.run_id = store, run_id
        self._recorded: set[tuple[int, str, int]] | None = None

    def load(self) -> list[UpdateDecision]:
        """Every recorded decision, in order."""
        return [
            UpdateDecision.model_validate(d) for d in self.store.load_update_decisions(self.run_id)
        ]

    def record(self, decisions: list[UpdateDecision]) -> None:
        """Append the ``decisions`` not yet recorded."""
        if self._recorded is None:
            self._recorded = {(d.iteration, d.agent_id, d.candidate) for d in self.load()}
        for decision in decisions:
            key = (decision.iteration, decision.agent_id, decision.candidate)
            if key not in self._recorded:
                self.store.append_update_decision(self.run_id, decision.model_dump(mode="json"))
                self._recorded.add(key)
