"""`PosterEnv`: the weight-space ``poster`` task in language space, on the same held-out topics.

Two agents make a poster about a topic: ``key_word`` answers with one word, ``tagline``
with three to six words that use it. Each sees only the topic, in the very prompt the
weight-space agents get (:mod:`langmarl.envs.poster.prompts`); its language policy is the
system message and its demonstrations (:mod:`langmarl.core.demos`). The reward is
:func:`~langmarl.envs.poster.scoring.poster_scores`.

Decisions:

- Splits: the first ``num_eval`` topics are ``test`` (the MAGRPO quickstart's held-out
  set), the rest ``train``; the order is the topic file's, so both spaces hold out the same.
- Actors answer greedily (temperature 0) unless a trainer asks for exploration with
  :meth:`PosterEnv.exploring`: evaluation and validation are greedy, as in weight space.
  An exploring episode whose task carries a ``sample_seed`` samples with it (replayable).
- Per-agent credit comes with every episode (``metadata["agent_rewards"]``): each agent's
  own format term plus half of the shared-word term, summing to the reward. Because the
  agents answer independently, any combination of their answers can be scored without an
  LLM call (:meth:`PosterEnv.score_outputs`), which counterfactual credit uses.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from langmarl.config.envs import PosterConfig
from langmarl.core.base import BaseEnvironment, Exploring
from langmarl.core.errors import ConfigError, EnvError
from langmarl.core.records import AgentId, Policies, Step, Trajectory
from langmarl.envs.agent_models import PerAgentModels
from langmarl.envs.poster import prompts
from langmarl.envs.poster.scoring import agent_credit, load_topics, poster_scores

AGENTS: tuple[AgentId, AgentId] = ("key_word", "tagline")
OBSERVATIONS = {"key_word": prompts.KEY_WORD, "tagline": prompts.TAGLINE}
ROLES = {
    "key_word": "gives the poster's key word (one word)",
    "tagline": "writes a tagline of three to six words that uses the key word",
}
DEFAULT_POLICY = "You are a helpful assistant."
"""Each agent's starting instruction; what to answer is in its observation."""


class PosterEnv(PerAgentModels, Exploring, BaseEnvironment):
    """The poster task for language-space training (see the module docstring).

    Args:
        config: A :class:`PosterConfig`.
        topics: Topics to use instead of ``config.topics_path`` / the shipped ones.
        llm: The actors' client (the trainer sets one).
    """

    name = "poster"
    splits: dict[str, list[dict[str, Any]]]

    def __init__(
        self,
        config: PosterConfig | None = None,
        *,
        topics: list[str] | None = None,
        llm: Any = None,
    ) -> None:
        super().__init__()
        self.config = config or PosterConfig()
        names = (
            topics if topics is not None else load_topics(self.config.topics_path, "topics_path")
        )
        held = self.config.num_eval
        if len(names) <= held:
            raise ConfigError(
                f"only {len(names)} topics: lower num_eval (now {held}) below the topic count"
            )
        tasks = [{"id": f"poster/{i}", "topic": t, "question": t} for i, t in enumerate(names)]
        self.splits = {"train": tasks[held:], "test": tasks[:held]}
        self._start_models(llm)

    @property
    def agent_ids(self) -> list[AgentId]:
        return list(AGENTS)

    def agent_roles(self) -> dict[AgentId, str]:
        return dict(ROLES)

    def describe(self) -> str:
        return (
            "Two agents make a poster about a topic without seeing each other's answer: "
            "key_word gives one word, tagline a tagline of three to six words that uses it."
        )

    def default_policies(self) -> Policies:
        return dict.fromkeys(AGENTS, DEFAULT_POLICY)

    def sample_tasks(
        self, n: int, *, split: str = "train", rng: random.Random | None = None
    ) -> list[dict[str, Any]]:
        """``n`` distinct tasks of ``split`` while there are enough, then repeats."""
        if split not in self.splits:
            raise EnvError(f"Unknown split {split!r}; use 'train' or 'test'.")
        pool, rng = self.splits[split], rng or random.Random()
        picked: list[dict[str, Any]] = []
        while len(picked) < n:
            picked += rng.sample(pool, min(len(pool), n - len(picked)))
        return picked

    def observation(self, agent_id: AgentId, task: dict[str, Any]) -> str:
        return OBSERVATIONS[agent_id].format(prompt=task["topic"])

    def score_outputs(
        self, task: dict[str, Any], outputs: dict[AgentId, str]
    ) -> tuple[float, dict[AgentId, float]]:
        """The reward of the agents' ``outputs`` on ``task`` and each agent's credit (no
        LLM call: the agents answer independently, so any combination can be scored)."""
        parts = poster_scores(outputs["key_word"], outputs["tagline"])
        return parts["reward"], agent_credit(parts)

    # -- step API ---------------------------------------------------------------------------
    def reset(self, task: dict[str, Any]) -> dict[AgentId, str]:
        """Both agents see the topic at once."""
        return {agent_id: self.observation(agent_id, task) for agent_id in AGENTS}

    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        raise EnvError(
            "PosterEnv is simultaneous: both agents answer the same topic; use "
            "collect_trajectory(policies, task) instead of step()."
        )

    async def collect_trajectory(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """Both agents answer ``task`` concurrently; the pair is scored.

        Raises:
            EnvError: if no actor LLM is set or a policy is missing.
            LLMError: if an actor call fails after the client's retries.
        """
        actor = self.actor_for(policies)
        observations = self.reset(task)
        temperature = self.temperature
        seed = task.get("sample_seed") if temperature else None
        replies = await asyncio.gather(
            *(
                self.agent_llms.get(a, actor).achat_policy(
                    policies[a], observations[a], temperature=temperature, seed=seed
                )
                for a in AGENTS
            )
        )
        outputs = {a: reply.strip() for a, reply in zip(AGENTS, replies, strict=True)}
        parts = poster_scores(outputs["key_word"], outputs["tagline"])
        steps = [Step(agent_id=a, observation=observations[a], action=outputs[a]) for a in AGENTS]
        metadata = {
            "env": self.name,
            "task_id": task.get("id"),
            "reward_details": parts,
            "agent_rewards": agent_credit(parts),
            "temperature": temperature,
        }
        return Trajectory(
            task=task,
            steps=steps,
            reward=parts["reward"],
            agent_ids=self.agent_ids,
            metadata=metadata,
        )
