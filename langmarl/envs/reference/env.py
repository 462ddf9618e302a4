"""`ReferenceEnv`: the reference game in language space, one episode as two steps.

The speaker sees the items and the target and answers (:func:`speaker_observation`); the
channel keeps the first ``message_words`` words; the listener sees the labelled items and
what it heard and picks a label. The episode's steps are the speaker's and the listener's,
in that order, and its reward is :func:`~langmarl.envs.reference.scoring.reference_reward`.

Decisions:

- Splits: ``test`` is the first ``num_eval`` generated held-out episodes, ``train`` the
  first ``num_train`` training ones, both of episode seed 0: the same episodes as weight
  space's ``reference_far``/``reference_close`` tasks, whatever the run's seed.
- The listener (``config.listener``). ``rank`` (the default) picks the item under which the
  heard word is most likely (:func:`~langmarl.envs.reference.scoring.rank_pick`, through
  :meth:`~langmarl.llm.client.LLMClient.option_logprobs`): on 30 held-out episodes with the
  right word the embedded model picked the target 30 times (``far``) and 25 (``close``),
  where asking it for a label was at chance (DESIGN.md: ask a small model to score, not to
  answer). Language-space learning is then the speaker's; the listener's policy is not
  read. ``generate`` asks the listener's policy for a label instead (any endpoint).
- The speaker (``config.speaker``). ``generate`` (the default) asks its policy for a
  word; ``rank`` chooses one of the target's words by its likelihood after the policy and
  observation as plain text (:meth:`_choose`): the text weight space's speaker reads, so
  a speaker trained there carries over unchanged, and the pool's demonstrations decide
  which attribute it names.
- An empty message (nothing heard) leaves the listener guessing: ``rank`` picks ``A``,
  which is the target one time in ``num_items`` since the target's place is uniform.
- Speaker and listener answer greedily unless a trainer explores (:meth:`exploring`); an
  exploring episode whose task carries a ``sample_seed`` samples with it.
- Both agents' credit is the team's reward (``metadata["agent_rewards"]``): the pick
  depends on both answers, so no part of it is either's alone.
"""

from __future__ import annotations

import asyncio
import math
import random
from typing import Any

from langmarl.config.envs import ReferenceConfig
from langmarl.core.base import BaseEnvironment, Exploring
from langmarl.core.demos import Demonstration, DemoPolicy
from langmarl.core.errors import EnvError
from langmarl.core.records import AgentId, Policies, Step, Trajectory
from langmarl.envs.agent_models import PerAgentModels
from langmarl.envs.reference import prompts
from langmarl.envs.reference.episodes import (
    Episode,
    describe,
    episode_from_record,
    episode_record,
    make_episodes,
)
from langmarl.envs.reference.scoring import channel, parse_pick, rank_pick, reference_reward

AGENTS: tuple[AgentId, AgentId] = ("speaker", "listener")
ROLES = {
    "speaker": "sees the items and the target and says one word that tells the target apart",
    "listener": "sees the labelled items and the speaker's word and answers with a label",
}


def _policy(instruction: str, demos: tuple[tuple[str, str], ...]) -> str:
    shown = tuple(Demonstration(seen, answer) for seen, answer in demos)
    return DemoPolicy(instruction, shown).render()


DEFAULT_POLICIES: Policies = {
    "speaker": _policy(prompts.SPEAKER_INSTRUCTION, prompts.SPEAKER_DEMOS),
    "listener": _policy(prompts.LISTENER_INSTRUCTION, prompts.LISTENER_DEMOS),
}
"""Each agent's starting policy: its instruction and three worked demonstrations."""


class ReferenceEnv(PerAgentModels, Exploring, BaseEnvironment):
    """The reference game for language-space training (see the module docstring).

    Args:
        config: A :class:`ReferenceConfig`.
        llm: The actors' client (the trainer sets one).
    """

    name = "reference"
    reward_range = (0.0, 1.0)
    splits: dict[str, list[dict[str, Any]]]

    def __init__(self, config: ReferenceConfig | None = None, *, llm: Any = None) -> None:
        super().__init__()
        self.config = config or ReferenceConfig()
        config, items = self.config, self.config.num_items
        train = make_episodes(config.condition, "train", config.num_train, num_items=items)
        test = make_episodes(config.condition, "test", config.num_eval, num_items=items)
        self.splits = {"train": [_task(e) for e in train], "test": [_task(e) for e in test]}
        self._start_models(llm)

    @property
    def agent_ids(self) -> list[AgentId]:
        return list(AGENTS)

    def agent_roles(self) -> dict[AgentId, str]:
        return dict(ROLES)

    def describe(self) -> str:
        return (
            f"A referential game ({self.config.condition} condition): the speaker sees "
            f"{self.config.num_items} objects and which one is the target and says one word; "
            "the listener sees the objects labelled A, B, C and hears only that word, and "
            "must pick the target."
        )

    def default_policies(self) -> Policies:
        return dict(DEFAULT_POLICIES)

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

    # -- step API ---------------------------------------------------------------------------
    def reset(self, task: dict[str, Any]) -> dict[AgentId, str]:
        """The speaker's observation (the listener's comes with the message)."""
        return {"speaker": prompts.speaker_observation(episode_from_record(task))}

    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        raise EnvError(
            "ReferenceEnv runs its two steps itself (the listener's observation holds the "
            "speaker's message); use collect_trajectory(policies, task)."
        )

    async def collect_trajectory(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """The speaker speaks, the channel carries its first words, the listener picks.

        Raises:
            EnvError: if no actor LLM is set, a policy is missing, or the ``rank`` listener's
                client cannot score options.
            LLMError: if an actor call fails after the client's retries.
        """
        actor = self.actor_for(policies)
        speaker, listener = (self.agent_llms.get(a, actor) for a in AGENTS)
        episode = episode_from_record(task)
        seed = task.get("sample_seed") if self.temperature else None
        seen = prompts.speaker_observation(episode)
        said: dict[str, Any] = {}
        if self.config.speaker == "rank":
            message, said = await self._choose(speaker, policies["speaker"], episode, seed)
        else:
            message = await speaker.achat_policy(
                policies["speaker"], seen, temperature=self.temperature, seed=seed
            )
        heard = channel(message, self.config.message_words)
        view = prompts.listener_observation(episode, heard)
        if self.config.listener == "rank":
            answer, info = await self._rank(listener, episode, heard)
        else:
            reply = await listener.achat_policy(
                policies["listener"], view, temperature=self.temperature, seed=seed
            )
            answer, info = reply.strip(), {}
        reward = reference_reward(episode, answer)
        steps = [
            Step(agent_id="speaker", observation=seen, action=message.strip(),
                 info={"heard": heard, **said}),
            Step(agent_id="listener", observation=view, action=answer, reward=reward, info=info),
        ]  # fmt: skip
        details = {
            "items": [describe(item) for item in episode.items],
            "target": episode.target_label,
            "heard": heard,
            "pick": parse_pick(answer, episode.labels),
            "reward": reward,
        }
        return Trajectory(
            task=task,
            steps=steps,
            reward=reward,
            agent_ids=self.agent_ids,
            metadata={
                "env": self.name,
                "task_id": task.get("id"),
                "reward_details": details,
                "agent_rewards": dict.fromkeys(AGENTS, reward),
                "temperature": self.temperature,
            },
        )

    async def _choose(
        self, actor: Any, policy: str, episode: Episode, seed: int | None
    ) -> tuple[str, dict[str, Any]]:
        """The ``rank`` speaker's word: one of the target's words (the menu,
        :func:`~langmarl.envs.reference.prompts.speaker_menu`), the most likely after the
        policy and observation as plain text (:func:`~langmarl.envs.reference.prompts.
        policy_prompt`), or, exploring, drawn from ``softmax(score / temperature)`` with
        the task's seed. A score is the option's mean token log-probability (each word is
        one token of the embedded model's tokenizer, so it is the word's log-probability,
        what weight space's menu trains)."""
        _check_ranks(actor, "speaker")
        menu = prompts.speaker_menu(episode)
        prefix = prompts.policy_prompt(policy, prompts.speaker_observation(episode))
        scores = await asyncio.to_thread(actor.option_logprobs, prefix, menu)
        if self.temperature:
            top = max(scores)
            weights = [math.exp((x - top) / self.temperature) for x in scores]
            pick = random.Random(seed).choices(range(len(menu)), weights)[0]
        else:
            pick = max(range(len(menu)), key=scores.__getitem__)
        return menu[pick].strip(), {"menu": {o.strip(): round(x, 4) for o, x in zip(
            menu, scores, strict=True)}}  # fmt: skip

    async def _rank(self, actor: Any, episode: Episode, heard: str) -> tuple[str, dict[str, Any]]:
        """The ranking listener's label (:func:`~langmarl.envs.reference.scoring.rank_pick`)
        and the items' scores."""
        _check_ranks(actor, "listener")
        label, scores = await asyncio.to_thread(rank_pick, episode, heard, actor.option_logprobs)
        return label, {"scores": None if scores is None else [round(x, 4) for x in scores]}


def _check_ranks(actor: Any, agent: str) -> None:
    """Raises EnvError when ``agent``'s ``rank`` setting meets an endpoint that cannot score."""
    if not actor.ranks_options:
        raise EnvError(
            f"{agent}='rank' scores options with a local model's log-probabilities, which "
            "this actor endpoint does not give: use the embedded model (actor_llm preset "
            f"'local') or set {agent}='generate'"
        )


def _task(episode: Episode) -> dict[str, Any]:
    return {**episode_record(episode), "question": prompts.speaker_observation(episode)}
