"""`PistonballEnv`: PettingZoo's Pistonball for language-space training.

Each piston is an agent (``piston_0`` next to the left wall … ``piston_{N-1}``, PettingZoo's
names, used unchanged by policies, checkpoints and the critic) whose policy is the system
prompt it answers its observation with. One cycle = every piston decides (all requests at
once, see :mod:`~langmarl.envs.pistonball.episode`), then the physics steps. The episode
reward is PettingZoo's shared team reward summed over cycles (up to about +100 when the ball
reaches the wall; -0.1 per cycle before that).

The trajectory's steps are per-piston summaries of a few segments of cycles (see
:mod:`~langmarl.envs.pistonball.summary`), so the critic's prompt stays bounded at any
episode length; the per-cycle numbers are kept in ``metadata["log"]``. With
``credit="region"`` the training hook wraps the critic so it judges regions instead (see
:mod:`~langmarl.envs.pistonball.credit`).
"""

from __future__ import annotations

import random
from string import Template
from typing import Any

from langmarl.config.envs import PistonballConfig
from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import ConfigError, EnvError
from langmarl.core.records import AgentId, Policies, Trajectory
from langmarl.envs.pistonball import prompts
from langmarl.envs.pistonball.episode import (
    EpisodeResult,
    EpisodeSettings,
    apply_replies,
    llm_decider,
    new_simulator,
    observe_all,
    play_episode,
)
from langmarl.envs.pistonball.physics import read_state
from langmarl.envs.pistonball.summary import (
    Groups,
    compact_log,
    piston_groups,
    region_groups,
    summarise,
)
from langmarl.llm.client import LLMClient

SEED_RANGE = 2**31
"""Episode seeds are drawn from ``range(SEED_RANGE)``."""


class PistonballEnv(BaseEnvironment):
    """N pistons, each an LLM agent, push a ball to the left wall.

    Args:
        config: A :class:`PistonballConfig` (pistons, cycles, action mode, credit).
        llm: The actors' client (the trainer sets one with role ``actor``).
        concurrent: Request a cycle's decisions all at once (``False``: one at a time).
    """

    name = "pistonball"

    def __init__(
        self,
        config: PistonballConfig | None = None,
        *,
        llm: LLMClient | None = None,
        concurrent: bool = True,
    ) -> None:
        super().__init__()
        self.config = config or PistonballConfig()
        self.settings = EpisodeSettings.from_config(self.config)
        self.llm = llm
        self.concurrent = concurrent
        self._live: dict[str, Any] | None = None

    @property
    def agent_ids(self) -> list[AgentId]:
        return self.settings.agent_ids

    def regions(self) -> Groups:
        """The credit regions: contiguous groups of ``region_size`` pistons."""
        return region_groups(self.config.num_pistons, self.config.region_size)

    def agent_roles(self) -> dict[AgentId, str]:
        n = self.config.num_pistons
        return {
            agent: Template(prompts.ROLE).substitute(number=i + 1, num_pistons=n)
            for i, agent in enumerate(self.agent_ids)
        }

    def describe(self) -> str:
        return Template(prompts.DESCRIPTION).substitute(
            num_pistons=self.config.num_pistons,
            max_cycles=self.config.max_cycles,
            action_text=prompts.ACTION_TEXT[self.config.action_mode],
        )

    def default_policies(self) -> Policies:
        rule = prompts.REPLY_RULE[self.config.action_mode]
        return {
            agent: Template(prompts.POLICY).substitute(agent_id=agent, reply_rule=rule)
            for agent in self.agent_ids
        }

    def sample_tasks(
        self, n: int, *, split: str = "train", rng: random.Random | None = None
    ) -> list[dict[str, Any]]:
        """``n`` episodes, each ``{"seed": s}`` (the ball's drop and spin follow the seed)."""
        rng = rng or random.Random(self.config.seed)
        return [{"seed": rng.randrange(SEED_RANGE)} for _ in range(n)]

    # -- whole episodes ---------------------------------------------------------------------
    async def collect_trajectory(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """Play one episode on its own simulator (episodes can run concurrently).

        Raises:
            EnvError: if no actor LLM is set or a piston has no policy.
            LLMError: if an actor call fails after the client's retries.
        """
        actor = self.actor_for(policies)
        decide = llm_decider(actor, policies, self.agent_ids, concurrent=self.concurrent)
        result = await play_episode(self.settings, decide, seed=task.get("seed"))
        return self.trajectory(result, task)

    def trajectory(self, result: EpisodeResult, task: dict[str, Any]) -> Trajectory:
        """The trajectory of a played episode: per-piston summary steps, the team reward
        and the per-cycle log."""
        steps = summarise(
            result.cycles,
            piston_groups(self.config.num_pistons),
            segments=self.config.critic_segments,
            start_heights=result.start.heights,
            start_ball=result.start.ball.x,
            continuous=self.config.action_mode == "continuous",
        )
        by_piston = {a: 0 for a in self.agent_ids}
        for cycle in result.cycles:
            for index in cycle.failed:
                by_piston[self.agent_ids[index]] += 1
        metadata = {
            "env": self.name,
            "action_mode": self.config.action_mode,
            "num_pistons": self.config.num_pistons,
            "cycles": len(result.cycles),
            "terminated": result.terminated,
            "parse_failures": result.parse_failures,
            "parse_failures_by_agent": by_piston,
            "start_ball_x": round(result.start.ball.x, 3),
            "start_heights": result.start.heights,
            "log": compact_log(result.cycles),
        }
        return Trajectory(
            task=task,
            steps=steps,
            reward=round(result.reward, 4),
            agent_ids=self.agent_ids,
            metadata=metadata,
        )

    # -- step API (one episode at a time) ---------------------------------------------------
    def reset(self, task: dict[str, Any]) -> dict[AgentId, str]:
        """Start an episode (``task["seed"]`` seeds it); return every piston's observation."""
        if self._live is not None:
            self._live["env"].close()
        env = new_simulator(self.settings)
        env.reset(seed=task.get("seed"))
        observations = observe_all(env, self.settings, 1)
        self._live = {"env": env, "cycle": 1, "observations": observations, "replies": []}
        return dict(zip(self.agent_ids, observations, strict=True))

    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        """Piston ``agent_id`` replies ``action``. Pistons act in order; when the last one
        has, the physics steps and the last piston's call returns its next observation,
        the cycle's team reward, whether the episode ended, and in ``info`` every piston's
        next observation and the cycle's parse failures. Earlier pistons get
        ``("", 0.0, False, {"waiting": True})``.

        Raises:
            EnvError: before ``reset``, after the end, or out of turn.
        """
        live = self._live
        if live is None or not live["env"].agents:
            raise EnvError("No episode running: call reset(task) first.")
        expected = self.agent_ids[len(live["replies"])]
        if agent_id != expected:
            raise EnvError(f"It is {expected}'s turn, not {agent_id!r}.")
        live["replies"].append(action)
        if len(live["replies"]) < len(self.agent_ids):
            return "", 0.0, False, {"waiting": True}
        env = live["env"]
        record = apply_replies(
            env, self.settings, live["cycle"], live["observations"], live["replies"]
        )
        done = not env.agents or live["cycle"] >= self.settings.max_cycles
        live["cycle"] += 1
        live["replies"] = []
        live["observations"] = [] if done else observe_all(env, self.settings, live["cycle"])
        info = {
            "observations": dict(zip(self.agent_ids, live["observations"], strict=False)),
            "parse_failures": len(record.failed),
            "ball_x": read_state(env).ball.x,
        }
        own = live["observations"][-1] if live["observations"] else ""
        return own, record.reward, done, info


def make_pistonball(config: PistonballConfig | None = None, **kwargs: Any) -> PistonballEnv:
    """The registry's factory: ``make_env("pistonball", PistonballConfig(...))``.

    Raises:
        ConfigError: if ``config`` is not a :class:`PistonballConfig` (its pistons, cycles and
            action mode would be missing).
    """
    if config is not None and not isinstance(config, PistonballConfig):
        raise ConfigError(
            f"make_env('pistonball') needs a PistonballConfig, got {type(config).__name__}; "
            "load a config whose env is 'pistonball' or build PistonballConfig(num_pistons=...)."
        )
    return PistonballEnv(config, **kwargs)
