"""Per-environment configs: the reference fields and defaults, validated."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from langmarl.config.base import BaseConfig
from langmarl.core.validation import did_you_mean

TaskType = Literal["qa", "math", "writing", "coding"]


class LanguageTaskConfig(BaseConfig):
    """Language tasks: N agents collaborate in sequence on qa, math, writing or coding."""

    env: str = "language"
    task_type: TaskType = "qa"
    """Task type."""
    benchmark_path: str | None = None
    """Benchmark file or directory (GSM8K/MATH/HumanEval/HotpotQA/creative-writing JSONL);
    ``None`` uses the small task set shipped with langmarl."""
    data_limit: int | None = Field(default=None, ge=1)
    """Load at most this many tasks (``None``: all)."""
    use_verified_reward: bool = False
    """Verify rewards with an LLM judge where the task allows it."""


OvercookedLayout = Literal[
    "cramped_room",
    "asymmetric_advantages",
    "coordination_ring",
    "forced_coordination",
    "counter_circuit",
]
OVERCOOKED_AGENTS = {
    "llm": "llm",
    "proagent": "llm",
    "greedy": "greedy",
    "scripted": "greedy",
}
"""Accepted ``p0_agent``/``p1_agent`` values (any case) → the cook's kind: ``llm`` (acts on
its language policy; the reference's ``ProAgent`` maps here) or ``greedy`` (scripted)."""


class OvercookedConfig(BaseConfig):
    """Overcooked: two cooks, skill-level text actions, +20 per delivered soup."""

    env: str = "overcooked"
    layout: OvercookedLayout = "cramped_room"
    """Kitchen layout name (the five classic Overcooked-AI layouts)."""
    episode_horizon: int = Field(default=400, ge=1)
    """Maximum timesteps per episode."""
    p0_agent: str = "ProAgent"
    """Agent 0 type: ``llm`` (a language policy; the reference's ``ProAgent`` means the same)
    or ``greedy`` (a scripted cook, part of the environment, not trained); any case."""
    p1_agent: str = "ProAgent"
    """Agent 1 type, as ``p0_agent``."""

    @field_validator("p0_agent", "p1_agent", mode="before")
    @classmethod
    def _agent_kind(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse an agent type that is not in :data:`OVERCOOKED_AGENTS`, naming the choices."""
        if not isinstance(value, str):
            return value
        if value.strip().lower() not in OVERCOOKED_AGENTS:
            hint = did_you_mean(value, OVERCOOKED_AGENTS)
            raise ValueError(
                f"{info.field_name}={value!r} is not an Overcooked agent type.{hint} "
                "Use 'llm' (a language policy, also 'ProAgent') or 'greedy' (scripted)."
            )
        return value

    def cook_kinds(self) -> tuple[str, str]:
        """The two cooks' kinds, ``llm`` or ``greedy``, from ``p0_agent`` and ``p1_agent``."""
        return (
            OVERCOOKED_AGENTS[self.p0_agent.strip().lower()],
            OVERCOOKED_AGENTS[self.p1_agent.strip().lower()],
        )


class PistonballConfig(BaseConfig):
    """Pistonball (PettingZoo ``pistonball_v6``): N pistons push a ball to the left wall.

    Each piston is one agent (``piston_0`` … ``piston_{N-1}``, PettingZoo's names) that reads
    a text observation of the physics state every cycle and answers up, down or stay (or a
    number in continuous mode).
    """

    env: str = "pistonball"
    num_agents: int = Field(default=20, ge=2)
    """Number of agents (one per piston; kept equal to ``num_pistons``)."""
    num_pistons: int = Field(default=20, ge=2)
    """Number of pistons (PettingZoo needs at least 2)."""
    max_cycles: int = Field(default=125, ge=1)
    """Maximum cycles per episode (every piston acts once per cycle)."""
    frame_size: int = Field(default=84, ge=8)
    """Observation frame size of the reference's pixel observations; kept for API parity.
    Observations here are text read from the physics state, so it is not used."""
    action_mode: Literal["discrete", "continuous"] = "discrete"
    """``discrete``: each reply is up, down or stay; ``continuous``: a number from -1
    (down) to 1 (up), the piston moving that many steps of 4 px."""
    credit: Literal["piston", "region"] = "piston"
    """Credit assignment: ``piston`` (the critic gives feedback to every piston) or
    ``region`` (to contiguous groups of ``region_size`` pistons; each piston of a region gets
    its region's feedback). Fewer, larger sections keep the critic's reply short when there
    are many pistons."""
    region_size: int = Field(default=5, ge=1)
    """Pistons per region when ``credit="region"`` (the last region may be smaller)."""
    critic_segments: int = Field(default=5, ge=1)
    """The critic sees each piston's (or region's) episode as at most this many segments
    of consecutive cycles (action counts, height, ball progress, reward), so its prompt grows
    with pistons x segments instead of pistons x cycles."""
    random_drop: bool = True
    """Drop the ball at a random offset (PettingZoo's ``random_drop``)."""
    random_rotate: bool = True
    """Give the ball a random initial spin (PettingZoo's ``random_rotate``)."""

    @model_validator(mode="before")
    @classmethod
    def _one_agent_per_piston(cls, data: Any) -> Any:
        """Set ``num_agents`` from ``num_pistons`` (or the other way round) when only one is
        given; refuse two different values."""
        if not isinstance(data, dict):
            return data
        agents, pistons = data.get("num_agents"), data.get("num_pistons")
        if agents is not None and pistons is not None and agents != pistons:
            raise ValueError(
                f"num_agents ({agents}) must equal num_pistons ({pistons}): one agent per "
                "piston; set only num_pistons"
            )
        if agents is None and pistons is not None:
            data = {**data, "num_agents": pistons}
        elif pistons is None and agents is not None:
            data = {**data, "num_pistons": agents}
        return data


class PosterConfig(BaseConfig):
    """The ``poster`` task in language space: two agents, a key word and a tagline that uses
    it, held out on the same topics as the weight-space quickstart."""

    env: str = "poster"
    num_agents: int = Field(default=2, ge=2, le=2)
    """Two agents: ``key_word`` and ``tagline``."""
    topics_path: str | None = None
    """A text file with one topic per line (``None``: the shipped topics)."""
    num_eval: int = Field(default=20, ge=1)
    """The first this many topics are the held-out ``test`` split (as MAGRPO's ``num_eval``)."""
    agent_models: dict[str, str] = Field(default_factory=dict)
    """Per agent (``key_word``, ``tagline``), the ``model_string`` its actor runs instead of
    ``actor_llm``'s, e.g. a MAGRPO checkpoint's ``agent-K`` folder, so weight-trained agents
    can be optimized further in language space."""

    @field_validator("agent_models")
    @classmethod
    def _known_agents(cls, value: dict[str, str]) -> dict[str, str]:
        return known_agent_models(value, ("key_word", "tagline"), "poster")


class ReferenceConfig(BaseConfig):
    """The ``reference`` game (Lewis game) in language space: a speaker names the target
    among generated items in a word, a listener picks it by label
    (:mod:`langmarl.envs.reference`)."""

    env: str = "reference"
    num_agents: int = Field(default=2, ge=2, le=2)
    """Two agents: ``speaker`` and ``listener``."""
    condition: Literal["far", "close"] = "close"
    """``far``: items share no attribute value; ``close``: the distractors differ from the
    target in one attribute only, so the speaker must name that one."""
    num_items: int = Field(default=3, ge=2, le=3)
    """Items per episode (chance is 1 / num_items)."""
    message_words: int = Field(default=1, ge=1, le=3)
    """Words of the speaker's answer the listener hears (the first ones)."""
    num_train: int = Field(default=500, ge=1)
    """Generated training episodes."""
    num_eval: int = Field(default=30, ge=1)
    """Held-out episodes (targets never seen in training), as MAGRPO's ``num_eval``."""
    listener: Literal["rank", "generate"] = "rank"
    """How the listener picks: ``rank`` takes the item under which the heard word is most
    likely (a local model's log-probabilities; the listener's policy is not used), or
    ``generate`` asks the listener's policy for a label."""
    speaker: Literal["generate", "rank"] = "generate"
    """How the speaker answers: ``generate`` asks its policy for a word; ``rank`` takes
    the one of the target's words that is most likely after its policy (a local model's
    log-probabilities), so its demonstrations decide which attribute it names."""
    agent_models: dict[str, str] = Field(default_factory=dict)
    """Per agent (``speaker``, ``listener``), the ``model_string`` its actor runs instead of
    ``actor_llm``'s, e.g. a MAGRPO checkpoint's ``agent-K`` folder (weights, then language)."""

    @field_validator("agent_models")
    @classmethod
    def _known_agents(cls, value: dict[str, str]) -> dict[str, str]:
        return known_agent_models(value, ("speaker", "listener"), "reference")


class TicTacToeConfig(BaseConfig):
    """TicTacToe in language space: one LLM player (X) whose system prompt is trained
    against an :class:`~langmarl.envs.text.tictactoe.Opponent`."""

    env: str = "tictactoe"
    num_agents: int = Field(default=1, ge=1, le=1)
    """One player (the LLM plays X)."""
    play_style: Literal["optimal", "random"] = "optimal"
    """The opponent: exact minimax, or uniformly random moves seeded per episode."""
    max_steps: int = Field(default=12, ge=1)
    """Moves the player may make before the game is cut off."""


def known_agent_models(value: dict[str, str], agents: tuple[str, str], env: str) -> dict[str, str]:
    """``agent_models`` checked to name only ``agents`` (an env's two agents).

    Raises:
        ValueError: naming the unknown agent, the near name and the two there are.
    """
    for agent in value:
        if agent not in agents:
            hint = did_you_mean(agent, list(agents))
            raise ValueError(
                f"agent_models names {agent!r}, which is not a {env} agent.{hint} "
                f"Use {agents[0]} and/or {agents[1]}."
            )
    return value
