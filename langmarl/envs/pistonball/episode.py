"""One Pistonball episode: every cycle, all pistons decide, then the physics steps.

::

    env = make_parallel_env(...)            # fresh per episode: episodes share nothing
    env.reset(seed)
    while the ball is not at the wall and cycles remain:
        observations = [observe(state, i) for each piston]
        replies = await decide(cycle, observations, state)   # LLM: N calls at once
        moves = [parse_move(r) for r in replies]              # unreadable -> stay, counted
        env.step(moves)                                       # one shared team reward

Who decides is injected (:data:`Decide`): :func:`llm_decider` asks an LLM client for every
piston's reply, by default all at once (``asyncio.gather``) so the embedded engine batches
them into one ``generate`` call; :func:`scripted_decider` answers from a function of the
state (tests, recordings, benchmarks of the physics alone).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import EnvError
from langmarl.core.records import AgentId, Policies
from langmarl.envs.pistonball.actions import parse_move
from langmarl.envs.pistonball.observation import observe, piston_id
from langmarl.envs.pistonball.physics import (
    ActionMode,
    PhysicsState,
    env_action,
    make_parallel_env,
    read_state,
)

if TYPE_CHECKING:
    from langmarl.config.envs import PistonballConfig
    from langmarl.llm.client import LLMClient

Decide = Callable[[int, list[str], PhysicsState], Awaitable[list[str]]]
"""``(cycle, observations, state) -> replies``: one reply per piston, in piston order."""


@dataclass(frozen=True)
class EpisodeSettings:
    """What shapes an episode (the simulator's options and the observation's)."""

    num_pistons: int
    max_cycles: int
    action_mode: ActionMode = "discrete"
    random_drop: bool = True
    random_rotate: bool = True

    @classmethod
    def from_config(cls, config: PistonballConfig) -> EpisodeSettings:
        """The settings a run config gives."""
        return cls(
            num_pistons=config.num_pistons,
            max_cycles=config.max_cycles,
            action_mode=config.action_mode,
            random_drop=config.random_drop,
            random_rotate=config.random_rotate,
        )

    @property
    def agent_ids(self) -> list[AgentId]:
        """The pistons' ids, left to right, as PettingZoo names them."""
        return [piston_id(i) for i in range(self.num_pistons)]


@dataclass
class CycleRecord:
    """One cycle: what each piston read and replied, and what followed.

    Attributes:
        cycle: 1-based.
        observations: Each piston's observation.
        replies: Each piston's reply, unchanged.
        moves: The parsed moves in [-1, 1].
        failed: Pistons whose reply was unreadable (they stayed).
        heights: Piston heights after the cycle.
        ball_x: The ball's centre after the cycle, in piston widths from the wall.
        reward: The team reward of the cycle.
    """

    cycle: int
    observations: list[str]
    replies: list[str]
    moves: list[float]
    failed: list[int]
    heights: list[int]
    ball_x: float
    reward: float


@dataclass
class EpisodeResult:
    """A finished episode.

    Attributes:
        start: The state after reset.
        cycles: One record per cycle played.
        terminated: Whether the ball reached the left wall.
        frames: RGB frames (reset + one per cycle) when rendering, else empty.
    """

    start: PhysicsState
    cycles: list[CycleRecord] = field(default_factory=list)
    terminated: bool = False
    frames: list[Any] = field(default_factory=list)

    @property
    def reward(self) -> float:
        """The episode's team reward (sum over cycles)."""
        return sum(c.reward for c in self.cycles)

    @property
    def parse_failures(self) -> int:
        """Replies that were unreadable (and taken as stay)."""
        return sum(len(c.failed) for c in self.cycles)


def new_simulator(settings: EpisodeSettings, *, render: bool = False) -> Any:
    """A fresh PettingZoo env for one episode."""
    return make_parallel_env(
        settings.num_pistons,
        settings.max_cycles,
        settings.action_mode,
        random_drop=settings.random_drop,
        random_rotate=settings.random_rotate,
        render=render,
    )


async def play_episode(
    settings: EpisodeSettings, decide: Decide, *, seed: int | None = None, render: bool = False
) -> EpisodeResult:
    """Play one episode on a fresh simulator (see the module docstring).

    Raises:
        EnvError: if ``decide`` returns the wrong number of replies.
    """
    env = new_simulator(settings, render=render)
    try:
        env.reset(seed=seed)
        result = EpisodeResult(start=read_state(env))
        if render:
            result.frames.append(env.render())
        while env.agents and len(result.cycles) < settings.max_cycles:
            record = await _cycle(env, settings, decide, len(result.cycles) + 1)
            result.cycles.append(record)
            if render:
                result.frames.append(env.render())
        result.terminated = bool(env.unwrapped.terminate)
        return result
    finally:
        env.close()


async def _cycle(env: Any, settings: EpisodeSettings, decide: Decide, cycle: int) -> CycleRecord:
    observations = observe_all(env, settings, cycle)
    replies = list(await decide(cycle, observations, read_state(env)))
    return apply_replies(env, settings, cycle, observations, replies)


def observe_all(env: Any, settings: EpisodeSettings, cycle: int) -> list[str]:
    """Every piston's observation before ``cycle`` (1-based)."""
    state = read_state(env)
    return [
        observe(
            state,
            i,
            cycle=cycle,
            max_cycles=settings.max_cycles,
            action_mode=settings.action_mode,
        )
        for i in range(settings.num_pistons)
    ]


def apply_replies(
    env: Any, settings: EpisodeSettings, cycle: int, observations: list[str], replies: list[str]
) -> CycleRecord:
    """Parse the pistons' ``replies``, step the physics once and record the cycle.

    Raises:
        EnvError: if there is not exactly one reply per piston.
    """
    if len(replies) != settings.num_pistons:
        raise EnvError(
            f"got {len(replies)} replies for {settings.num_pistons} pistons; "
            "every piston must answer once per cycle, in piston order"
        )
    parsed = [parse_move(reply, settings.action_mode) for reply in replies]
    actions = {
        agent: env_action(move.value, settings.action_mode)
        for agent, move in zip(settings.agent_ids, parsed, strict=True)
    }
    _, rewards, _, _, _ = env.step(actions)
    after = read_state(env)
    return CycleRecord(
        cycle=cycle,
        observations=observations,
        replies=replies,
        moves=[move.value for move in parsed],
        failed=[i for i, move in enumerate(parsed) if not move.ok],
        heights=after.heights,
        ball_x=after.ball.x,
        reward=float(next(iter(rewards.values()), 0.0)),
    )


def llm_decider(
    llm: LLMClient,
    policies: Policies,
    agent_ids: Sequence[AgentId],
    *,
    concurrent: bool = True,
    max_tokens: int | None = None,
) -> Decide:
    """Pistons as LLM agents: piston ``a`` asks ``llm`` with ``policies[a]`` as the system
    prompt and its observation as the user message.

    Args:
        concurrent: Send a cycle's N requests at once (the embedded engine batches them;
            remote endpoints get them in parallel, up to the config's ``max_concurrency``);
            ``False`` sends them one at a time (the benchmark's baseline).
        max_tokens: Reply length limit (default: the client config's).
    """

    async def ask(agent_id: AgentId, observation: str) -> str:
        return await llm.achat_policy(policies[agent_id], observation, max_tokens=max_tokens)

    async def decide(cycle: int, observations: list[str], state: PhysicsState) -> list[str]:
        pairs = list(zip(agent_ids, observations, strict=True))
        if concurrent:
            return list(await asyncio.gather(*(ask(a, o) for a, o in pairs)))
        return [await ask(a, o) for a, o in pairs]

    return decide


def scripted_decider(reply: Callable[[int, PhysicsState], str]) -> Decide:
    """Pistons answering ``reply(piston_index, state)`` (no LLM)."""

    async def decide(cycle: int, observations: list[str], state: PhysicsState) -> list[str]:
        return [reply(i, state) for i in range(len(observations))]

    return decide
