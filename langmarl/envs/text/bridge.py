"""Language-space training on any text environment: an adapter to ``BaseEnvironment``.

:class:`TextEnvAdapter` turns a CAMEL-style text environment (``SingleStepEnv``,
``MultiStepEnv`` such as ``TicTacToeEnv``, or anything meeting :class:`Environment`) into a
one-agent :class:`~langmarl.core.base.BaseEnvironment`: the agent's language policy is its
system prompt, each observation's question is the user message, and the episode reward is
the last step's reward (for TicTacToe: the game's outcome). ``MonteCarloTrainer`` can then
optimize the prompt, e.g. of a TicTacToe player.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from langmarl.core.aio import run_sync
from langmarl.core.base import BaseEnvironment, Exploring
from langmarl.core.errors import ConfigError, LLMError
from langmarl.core.records import AgentId, Policies, Step, Trajectory
from langmarl.envs.text import prompts
from langmarl.envs.text.models import Action, Observation
from langmarl.envs.text.single_step import SingleStepEnv

EnvFactory = Callable[[dict[str, Any]], Any]
"""Builds a fresh text environment for one episode from the episode's task dict."""


class TextEnvAdapter(Exploring, BaseEnvironment):
    """One agent playing a text environment, for language-space training.

    Args:
        env_factory: ``task -> env``; called once per episode so episodes can run concurrently.
        agent_id: The agent's id.
        max_turns: Stop an episode after this many turns (marked ``truncated``).
        description: What the agent does and how it is scored (the critic's context).
        default_policy: The system prompt training starts from.
        max_tokens: Reply length limit per turn.
        name: Environment name for run metadata.

    Actors answer at the actor's configured temperature; inside :meth:`exploring` (the pool
    search's exploration) at the given one.
    """

    greedy = None  # the actor's own temperature outside exploration, as before
    temperature = None

    def __init__(
        self,
        env_factory: EnvFactory,
        *,
        agent_id: AgentId = "player",
        max_turns: int = 20,
        description: str = "",
        default_policy: str = "",
        max_tokens: int | None = None,
        name: str = "text",
    ) -> None:
        super().__init__()
        if max_turns < 1:
            raise ConfigError(f"max_turns must be at least 1, got {max_turns}")
        self.env_factory = env_factory
        self.agent_id = agent_id
        self.max_turns = max_turns
        self.description = description
        self.default_policy = default_policy
        self.max_tokens = max_tokens
        self.name = name
        self._env: Any = None

    @classmethod
    def tictactoe(
        cls, play_style: str = "optimal", max_steps: int | None = 12, **kwargs: Any
    ) -> TextEnvAdapter:
        """An adapter playing TicTacToe games (``task["seed"]`` seeds a random opponent)."""
        from langmarl.envs.text.tictactoe import TicTacToeEnv

        def factory(task: dict[str, Any]) -> TicTacToeEnv:
            return TicTacToeEnv(max_steps=max_steps, play_style=play_style, seed=task.get("seed"))  # type: ignore[arg-type]

        kwargs.setdefault("description", prompts.TICTACTOE_DESCRIPTION)
        kwargs.setdefault("default_policy", prompts.TICTACTOE_SYSTEM_PROMPT)
        kwargs.setdefault("name", "tictactoe")
        return cls(factory, **kwargs)

    @property
    def agent_ids(self) -> list[AgentId]:
        return [self.agent_id]

    def describe(self) -> str:
        return self.description

    def default_policies(self) -> Policies:
        if self.default_policy:
            return {self.agent_id: self.default_policy}
        return super().default_policies()

    def sample_tasks(
        self, n: int, *, split: str = "train", rng: random.Random | None = None
    ) -> list[dict[str, Any]]:
        """``n`` tasks, each a ``{"seed": …}`` for the episode's environment."""
        rng = rng or random.Random()
        return [{"seed": rng.randrange(2**31)} for _ in range(n)]

    def reset(self, task: dict[str, Any]) -> dict[AgentId, str]:
        """Start a stand-alone episode (outside the trainer); returns the first question."""
        self._env = self.env_factory(task)
        observation = run_sync(_reset(self._env, task))
        return {self.agent_id: observation.question}

    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        """Apply the agent's answer in the stand-alone episode started by :meth:`reset`."""
        if self._env is None:
            raise ConfigError("TextEnvAdapter.step() before reset(): call reset(task) first")
        observation, reward, done, info = run_sync(self._env.step(Action(llm_response=action)))
        return observation.question, float(reward), bool(done), _jsonable(info)

    async def collect_trajectory(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """Play one episode with ``policies[agent_id]`` as the system prompt."""
        if self.llm is None:
            raise ConfigError("TextEnvAdapter has no LLM: call set_llm(client) (the trainer does)")
        policy = policies.get(self.agent_id, self.default_policy)
        env = self.env_factory(task)
        try:
            steps, reward, truncated, error = await self._play(env, policy, task)
        finally:
            await env.close()
        metadata: dict[str, Any] = {"env": self.name, "turns": len(steps), "truncated": truncated}
        if error:
            metadata["error"] = error
        return Trajectory(
            task=task, steps=steps, reward=reward, metadata=metadata, agent_ids=self.agent_ids
        )

    async def _play(
        self, env: Any, policy: str, task: dict[str, Any]
    ) -> tuple[list[Step], float, bool, str | None]:
        assert self.llm is not None  # checked by the caller
        observation = await _reset(env, task)
        steps: list[Step] = []
        reward = 0.0
        for _ in range(self.max_turns):
            try:
                answer = await self.llm.achat_policy(
                    policy,
                    observation.question,
                    max_tokens=self.max_tokens,
                    temperature=self.temperature,
                )
            except LLMError as exc:
                return steps, reward, False, str(exc)
            next_observation, reward, done, info = await env.step(Action(llm_response=answer))
            steps.append(
                Step(
                    agent_id=self.agent_id,
                    observation=observation.question,
                    action=answer,
                    reward=float(reward),
                    info=_jsonable(info),
                )
            )
            observation = next_observation
            if done:
                return steps, float(reward), False, None
        return steps, float(reward), True, None


async def _reset(env: Any, task: dict[str, Any]) -> Observation:
    if hasattr(env, "setup"):
        await env.setup()
    if isinstance(env, SingleStepEnv):
        observation = await env.reset(batch_size=1, seed=task.get("seed"))
    else:
        observation = await env.reset()
    if not isinstance(observation, Observation):
        raise ConfigError(
            f"{type(env).__name__}.reset() must return one Observation for the adapter"
        )
    return observation


def _jsonable(value: Any) -> Any:
    """``value`` with pydantic models dumped, so it fits a JSON trajectory record."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
