"""`OvercookedEnv`: two cooks in an Overcooked-AI kitchen, acting through text skills.

Each cook is either ``llm`` (its policy is a system prompt; its reply to a text observation
is read into a skill) or ``greedy`` (scripted, part of the environment). The agent ids are
``cook_0`` and ``cook_1`` (player 0 and 1 of the package's MDP); :attr:`agent_ids` lists
the LLM cooks only, since only they have policies to train, and those ids are used
unchanged by checkpoints, the critic and credit parsing.

An episode is simulated by :class:`~langmarl.envs.overcooked.episode.Episode` on the
package's ``OvercookedGridworld`` transition function. The cooks are asked for a skill
whenever theirs has ended; two cooks asked at the same tick are asked concurrently. Each
decision becomes one :class:`Step` (the observation, the reply, and in ``info`` the skill
read, the tick and how the skill ended; a failed skill or an unreadable reply also sets
``info["error"]`` so the critic sees it). ``metadata["verifier_facts"]`` holds what the MDP
counted (soups, onions potted per cook, failed skills), for grounded feedback.
"""

from __future__ import annotations

import asyncio
import random
from string import Template
from typing import Any

from langmarl.config.envs import OvercookedConfig
from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import ConfigError, EnvError, ParseError
from langmarl.core.records import AgentId, Policies, Step, Trajectory
from langmarl.envs.language.facts import FACTS_KEY
from langmarl.envs.overcooked import prompts
from langmarl.envs.overcooked.episode import Episode
from langmarl.envs.overcooked.greedy import greedy_skill
from langmarl.envs.overcooked.kitchen import Kitchen
from langmarl.envs.overcooked.layouts import load_mdp
from langmarl.envs.overcooked.observation import observe
from langmarl.envs.overcooked.skills import Skill, parse_skill

COOK_IDS = ("cook_0", "cook_1")
"""The cooks' agent ids, by MDP player index."""


def read_skill(reply: str) -> tuple[Skill, str | None]:
    """The skill a reply names, or ``wait`` and the reason (the documented fallback)."""
    try:
        return parse_skill(reply), None
    except ParseError:
        return Skill.WAIT, prompts.UNREADABLE


class OvercookedEnv(BaseEnvironment):
    """Two cooks, skill-level text actions, +20 per delivered soup.

    Args:
        config: Layout, horizon and the two cooks' kinds (``p0_agent``, ``p1_agent``).
        llm: The LLM cooks' client (the trainer sets one with role ``actor``).
    """

    name = "overcooked"
    has_verifier = True
    """Episodes carry facts counted by the MDP (see the module docstring)."""

    def __init__(self, config: OvercookedConfig | None = None, *, llm: Any = None) -> None:
        super().__init__()
        self.config = config or OvercookedConfig()
        self.layout = self.config.layout
        self.horizon = self.config.episode_horizon
        self.kinds = self.config.cook_kinds()
        self.mdp = load_mdp(self.layout)
        self.kitchen = Kitchen.from_mdp(self.mdp)
        self.llm = llm
        self._episode: Episode | None = None

    @property
    def agent_ids(self) -> list[AgentId]:
        return [COOK_IDS[i] for i, kind in enumerate(self.kinds) if kind == "llm"]

    def agent_roles(self) -> dict[AgentId, str]:
        return {a: prompts.ROLES[a] for a in self.agent_ids}

    def describe(self) -> str:
        text = Template(prompts.DESCRIPTION).substitute(layout=self.layout, horizon=self.horizon)
        scripted = [COOK_IDS[i] for i, kind in enumerate(self.kinds) if kind == "greedy"]
        return text + (f" {', '.join(scripted)} is a scripted greedy cook." if scripted else "")

    def default_policies(self) -> Policies:
        return {
            a: Template(prompts.POLICY).substitute(agent_id=a, role=prompts.ROLES[a])
            for a in self.agent_ids
        }

    def sample_tasks(
        self, n: int, *, split: str = "train", rng: random.Random | None = None
    ) -> list[dict[str, Any]]:
        """``n`` copies of the one task: the configured layout (the kitchen is deterministic)."""
        return [{"layout": self.layout, "horizon": self.horizon} for _ in range(n)]

    def new_episode(self) -> Episode:
        """A fresh episode (its own state, so episodes can run concurrently)."""
        return Episode(self.mdp, self.kitchen, self.horizon)

    def observe(self, episode: Episode, cook: int) -> str:
        """Cook ``cook``'s text observation of ``episode``."""
        return observe(episode, cook, list(COOK_IDS), self.layout)

    def advance(self, episode: Episode) -> float:
        """Let scripted cooks choose and play ticks until an LLM cook must choose or the
        episode ends; returns the reward gained."""
        reward = 0.0
        while not episode.done:
            for cook in episode.awaiting():
                if self.kinds[cook] == "greedy":
                    episode.assign(cook, greedy_skill(self.kitchen, episode.state, cook))
            if episode.awaiting():
                break
            reward += episode.tick()
        return reward

    # -- step API (one episode at a time) -----------------------------------------------------
    def reset(self, task: dict[str, Any]) -> dict[AgentId, str]:
        """Start an episode; returns the observation of each LLM cook."""
        self._episode = self.new_episode()
        self.advance(self._episode)
        return {COOK_IDS[c]: self.observe(self._episode, c) for c in self._llm_cooks()}

    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        """Give ``agent_id`` the skill its reply names. Once no LLM cook is left to choose,
        the kitchen runs until one must choose again; returns ``agent_id``'s observation,
        the reward gained, whether the episode ended, and in ``info`` the skill read,
        ``awaiting`` (the cooks to call ``step`` for next) and any ``error``.

        Raises:
            EnvError: before ``reset``, or for a cook that is not choosing now.
        """
        if self._episode is None:
            raise EnvError("Call reset(task) before step().")
        episode = self._episode
        cook = COOK_IDS.index(agent_id) if agent_id in COOK_IDS else -1
        if cook not in episode.awaiting() or self.kinds[cook] != "llm":
            waiting = [COOK_IDS[c] for c in self._llm_cooks()]
            raise EnvError(f"{agent_id!r} is not choosing a skill now; awaiting: {waiting}.")
        skill, error = read_skill(action)
        error = episode.assign(cook, skill) or error
        reward = self.advance(episode) if not self._llm_cooks() else 0.0
        info: dict[str, Any] = {
            "skill": skill.value,
            "awaiting": [COOK_IDS[c] for c in self._llm_cooks()],
        }
        if error:
            info["error"] = error
        return self.observe(episode, cook), reward, episode.done, info

    def _llm_cooks(self) -> list[int]:
        """The LLM cooks that must choose before the stepped episode goes on."""
        if self._episode is None:
            return []
        return [c for c in self._episode.awaiting() if self.kinds[c] == "llm"]

    # -- whole episodes -------------------------------------------------------------------------
    async def collect_trajectory(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """Play one episode with the LLM cooks on ``policies`` (keyed by :attr:`agent_ids`).

        Raises:
            EnvError: if an LLM cook has no policy or no actor LLM is set.
            LLMError: if an actor call fails after the client's retries.
        """
        self.check_policies(policies)
        episode = self.new_episode()
        steps: list[Step] = []
        last_step: dict[int, Step] = {}
        noted = [0, 0]
        while not episode.done:
            for cook in episode.awaiting():
                if self.kinds[cook] == "greedy":
                    skill = greedy_skill(self.kitchen, episode.state, cook)
                    last_step[cook] = self._record(
                        steps, episode, cook, "", skill.value, skill, None
                    )
            choosing = [c for c in episode.awaiting() if self.kinds[c] == "llm"]
            observations = [self.observe(episode, c) for c in choosing]
            replies = await self._ask(policies, choosing, observations)
            for cook, observation, reply in zip(choosing, observations, replies, strict=True):
                skill, error = read_skill(reply)
                last_step[cook] = self._record(
                    steps, episode, cook, observation, reply, skill, error
                )
            episode.tick()
            _note_results(episode, last_step, noted)
        return Trajectory(
            task=task,
            steps=steps,
            reward=episode.reward,
            agent_ids=self.agent_ids,
            metadata=self.summary(episode),
        )

    async def _ask(
        self, policies: Policies, cooks: list[int], observations: list[str]
    ) -> list[str]:
        """The LLM cooks' replies, asked concurrently."""
        if not cooks:
            return []
        llm = self.actor_for(policies)
        asks = [
            llm.achat_policy(policies[COOK_IDS[c]], o)
            for c, o in zip(cooks, observations, strict=True)
        ]
        return list(await asyncio.gather(*asks))

    def _record(
        self,
        steps: list[Step],
        episode: Episode,
        cook: int,
        observation: str,
        reply: str,
        skill: Skill,
        error: str | None,
    ) -> Step:
        """Assign ``skill`` to ``cook`` and append the decision as a :class:`Step`."""
        failure = episode.assign(cook, skill)
        info: dict[str, Any] = {"skill": skill.value, "tick": episode.timestep}
        if self.kinds[cook] == "greedy":
            info["scripted"] = True
        if error or failure:
            info["error"] = error or f"{skill.value} failed: {failure}"
        step = Step(agent_id=COOK_IDS[cook], observation=observation, action=reply, info=info)
        steps.append(step)
        return step

    def summary(self, episode: Episode) -> dict[str, Any]:
        """The trajectory metadata: layout, soups, events per cook and the critic's facts."""
        failed = [sum(not r.ok and r.skill is not Skill.WAIT for r in rs) for rs in episode.results]
        events = {COOK_IDS[c]: dict(episode.events[c]) for c in range(2)}
        facts = [
            prompts.EPISODE_FACT.format(
                soups=episode.soups, reward=episode.reward, ticks=episode.timestep
            )
        ]
        facts += [
            prompts.COOK_FACT.format(
                cook=COOK_IDS[c], kind=self.kinds[c], failed=failed[c], **episode.events[c]
            )
            for c in range(2)
        ]
        return {
            "env": self.name,
            "layout": self.layout,
            "soups": episode.soups,
            "ticks": episode.timestep,
            "agents": dict(zip(COOK_IDS, self.kinds, strict=True)),
            "events": events,
            "failed_skills": dict(zip(COOK_IDS, failed, strict=True)),
            FACTS_KEY: facts,
        }


def _note_results(episode: Episode, last_step: dict[int, Step], noted: list[int]) -> None:
    """Write how each cook's skill ended into the step that chose it."""
    for cook, step in last_step.items():
        results = episode.results[cook]
        if len(results) > noted[cook]:
            result = results[-1]
            noted[cook] = len(results)
            step.info["result"] = "done" if result.ok else f"failed: {result.reason}"
            if not result.ok and "error" not in step.info:
                step.info["error"] = f"{result.skill.value} failed: {result.reason}"


def overcooked_training_hooks(env: OvercookedEnv, config: Any = None) -> list[Any]:
    """No callbacks; refuses a run with no LLM cook, which would have nothing to train.

    Raises:
        ConfigError: when both ``p0_agent`` and ``p1_agent`` are ``greedy``.
    """
    if not env.agent_ids:
        raise ConfigError(
            "Overcooked with p0_agent='greedy' and p1_agent='greedy' has no LLM cook to "
            "train; set p0_agent or p1_agent to 'llm'."
        )
    return []
