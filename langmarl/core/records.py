"""Typed records that cross module boundaries in language-space training.

Every record is a pydantic model that round-trips through JSON (``to_dict``/``from_dict``),
so a run directory can be read without the code that wrote it.

Agent ids come from the environment (``BaseEnvironment.agent_ids``) and are used unchanged by
trajectories, policies, checkpoints, critic prompts and credit parsing. (The reference
implementation's checkpoint invents ``agent_1..N`` while environments use other names, so
training silently optimizes nothing; here nothing invents ids.)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

AgentId = str
"""An agent's name as the environment defines it (e.g. ``"planner"``, ``"piston_3"``)."""

Policies = dict[AgentId, str]
"""Agent id → language policy (the agent's system prompt)."""


class _Record(BaseModel):
    """Base of the records: JSON round-trip helpers and dict-style read access."""

    model_config = ConfigDict(extra="forbid")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """Validate a dict (as written by ``to_dict``) back into the record."""
        return cls.model_validate(data)

    def __getitem__(self, key: str) -> Any:
        """Dict-style access (``evaluation["per_agent"]``), as the reference returns dicts."""
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        """Dict-style ``get``."""
        return getattr(self, key, default) if key in type(self).model_fields else default


class Step(_Record):
    """One agent's turn in an episode.

    Attributes:
        agent_id: The acting agent, as the environment names it.
        observation: What the agent saw (its user message).
        action: What it answered.
        reward: Reward for this step (0 for sequential collaboration until the end).
        info: Anything else the environment reports (e.g. ``{"error": "..."}``).

    Other keys of a step dict (the reference's steps carry "agent_id, observation, action,
    etc.") are kept as extra fields and written back by ``to_dict``.
    """

    model_config = ConfigDict(extra="allow")

    agent_id: AgentId
    observation: str = ""
    action: str = ""
    reward: float = 0.0
    info: dict[str, Any] = Field(default_factory=dict)


_TRAJECTORY_POSITIONAL = ("task", "steps", "reward", "metadata")


class Trajectory(_Record):
    """One episode.

    Attributes:
        task: The task description (e.g. ``{"question": ..., "ground_truth": ...}``).
        steps: The turns in order; dicts are accepted and validated into :class:`Step`.
        reward: Episode reward.
        metadata: Free-form extras (env name, task id, reward details, errors).
        agent_ids: The environment's agent ids in turn order (needed to format credit
            prompts and to parse credit for agents that did not act).
    """

    task: dict[str, Any] = Field(default_factory=dict)
    steps: list[Step] = Field(default_factory=list)
    reward: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent_ids: list[AgentId] = Field(default_factory=list)

    def __init__(self, *args: Any, **data: Any) -> None:
        """Fields by keyword, or ``task, steps, reward, metadata`` by position as with the
        reference's dataclass (``Trajectory(task, steps, 1.0)``)."""
        if len(args) > len(_TRAJECTORY_POSITIONAL):
            raise TypeError(
                f"Trajectory takes at most {len(_TRAJECTORY_POSITIONAL)} positional arguments "
                f"({', '.join(_TRAJECTORY_POSITIONAL)}); got {len(args)}"
            )
        for name, value in zip(_TRAJECTORY_POSITIONAL, args, strict=False):
            if name in data:
                raise TypeError(f"Trajectory got {name!r} both by position and by keyword")
            data[name] = value
        super().__init__(**data)

    def actions_of(self, agent_id: AgentId) -> list[str]:
        """Every action ``agent_id`` took, in order."""
        return [step.action for step in self.steps if step.agent_id == agent_id]

    def final_action(self) -> str:
        """The last step's action ("" for an empty episode)."""
        return self.steps[-1].action if self.steps else ""

    def all_agent_ids(self) -> list[AgentId]:
        """``agent_ids`` if set, else the ids that acted, in order of first appearance."""
        if self.agent_ids:
            return list(self.agent_ids)
        return list(dict.fromkeys(step.agent_id for step in self.steps))


ParseStatus = Literal["json", "markers", "fallback", "global"]


class Evaluation(_Record):
    """The critic's verdict on one trajectory.

    Attributes:
        raw_response: The critic's reply text, unchanged.
        paradigm: ``central_credit`` (per-agent credit) or ``central_global``.
        per_agent: Agent id → the evaluation text addressed to that agent. For
            ``central_global`` every agent gets the same text.
        parse_status: How ``per_agent`` was obtained: ``json``, ``markers``, ``global``
            or ``fallback`` (the whole reply for every agent; see
            ``PolicyGradientOptimizer.parse_credit_response``).
        error: Set when the critic call failed after retries (then ``per_agent`` is empty
            and the episode contributes no gradient).
    """

    raw_response: str = ""
    paradigm: str = "central_credit"
    per_agent: dict[AgentId, str] = Field(default_factory=dict)
    parse_status: ParseStatus = "global"
    error: str | None = None


class Gradient(_Record):
    """A language gradient: a concrete improvement instruction for one agent (or the team).

    Attributes:
        agent_id: The agent it is for; ``"*"`` for a shared (``central_global``) gradient.
        text: The instruction.
        iteration: Training iteration.
        episode_id: The episode it came from (``None`` for an aggregate).
        error: Set when generation failed after retries (``text`` is then empty).
    """

    agent_id: AgentId
    text: str = ""
    iteration: int = 0
    episode_id: int | None = None
    error: str | None = None


SHARED = "*"
"""``Gradient.agent_id`` of a shared gradient that applies to every agent."""


class PolicyUpdate(_Record):
    """What happened to one agent's policy in the apply phase.

    Attributes:
        agent_id: The agent.
        method: ``rewrite`` (LLM rewrite), ``append`` (``apply_gradient`` fallback) or
            ``kept`` (no gradient, or every way of updating failed: the old policy stays); in
            a pool search, ``demonstration`` or ``merge`` (how the kept candidate was made).
        new_policy: The policy after the update (the old one for ``kept``).
        aggregated_gradient: The gradient that was applied.
        error: Why the preferred method was not used, if it was not.
    """

    agent_id: AgentId
    method: Literal["rewrite", "append", "kept", "demonstration", "merge"]
    new_policy: str = ""
    aggregated_gradient: str = ""
    error: str | None = None
