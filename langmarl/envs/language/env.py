"""`LanguageEnv`: N agents collaborate in sequence on qa, math, coding or writing tasks."""

from __future__ import annotations

import random
from string import Template
from typing import Any

from langmarl.config.envs import LanguageTaskConfig
from langmarl.core.aio import run_sync
from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import EnvError
from langmarl.core.records import AgentId, Policies, Step, Trajectory
from langmarl.envs.language import facts, prompts, rewards
from langmarl.envs.language.datasets import Task, load_tasks, sample, split_tasks
from langmarl.llm.client import LLMClient

Details = dict[str, Any]


def team_ids(task_type: str, num_agents: int) -> list[AgentId]:
    """The agents' ids for ``task_type``: ``num_agents - 1`` contributors, then the answerer
    (e.g. math with 2 agents: ``["analyst", "finalizer"]``)."""
    listed = prompts.CONTRIBUTORS[task_type]
    count = num_agents - 1
    contributors = listed[:count] + [f"contributor_{k}" for k in range(len(listed) + 1, count + 1)]
    return [*contributors, prompts.ANSWERER[task_type]]


def build_observation(task: Task, history: list[Step], agent_id: AgentId, last: bool) -> str:
    """What ``agent_id`` sees: the task, its context, the earlier agents' outputs and its
    instruction. Hidden fields (``ground_truth``, ``test``) are never shown."""
    task_type = str(task.get("task_type", "qa"))
    entries = "\n\n".join(f"[{s.agent_id}]\n{s.action.strip()}" for s in history)
    history_text = Template(prompts.HISTORY).substitute(entries=entries) if history else ""
    role = prompts.ROLES.get(agent_id, prompts.DEFAULT_ROLE)
    template = prompts.ANSWERER_INSTRUCTION if last else prompts.CONTRIBUTOR_INSTRUCTION
    instruction = Template(template).substitute(
        role=role, final_format=prompts.FINAL_FORMAT[task_type]
    )
    context = f"\nContext:\n{task['context']}" if task.get("context") else ""
    text = Template(prompts.OBSERVATION).substitute(
        question=task.get("question", ""),
        context=context,
        history=f"\n{history_text}\n" if history_text else "",
        instruction=instruction,
    )
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


class LanguageEnv(BaseEnvironment):
    """Language tasks solved by a team in sequence: each agent sees the task and the
    earlier agents' outputs; the last one answers, and its answer is scored.

    Args:
        config: A :class:`LanguageTaskConfig` (task type, agents, data, reward options).
        tasks: Tasks to use instead of loading ``config.benchmark_path`` / the shipped set.
        llm: The actors' client (the trainer sets one, with usage recorded as ``actor``).
        judge_llm: The judge for writing rewards and verified qa rewards (default: one for
            ``config.get_critic_llm()``, created on first use; role ``judge``).
        test_fraction: Share of the tasks held out as the ``test`` split.
    """

    name = "language"
    reward_range = (0.0, 1.0)  # qa (F1/exact), math, coding and writing rewards
    uses_judge = True  # writing rewards and verified qa rewards
    splits: dict[str, list[Task]]

    def __init__(
        self,
        config: LanguageTaskConfig | None = None,
        *,
        tasks: list[Task] | None = None,
        llm: LLMClient | None = None,
        judge_llm: LLMClient | None = None,
        test_fraction: float = 0.2,
    ) -> None:
        super().__init__()
        self.config = config or LanguageTaskConfig()
        self.task_type = self.config.task_type
        loaded = tasks or load_tasks(
            self.task_type, self.config.benchmark_path, self.config.data_limit
        )
        self.splits = split_tasks(loaded, test_fraction, self.config.seed or 0)
        self.llm = llm
        self.judge_llm = judge_llm
        self._ids = team_ids(self.task_type, self.config.num_agents)
        self._episode: dict[str, Any] | None = None

    @property
    def agent_ids(self) -> list[AgentId]:
        return list(self._ids)

    @property
    def has_verifier(self) -> bool:
        """Whether episodes carry verifier facts (qa, math, coding; not writing, which an
        LLM judge scores), for grounded feedback."""
        return self.task_type in facts.VERIFIED_TASK_TYPES

    def agent_roles(self) -> dict[AgentId, str]:
        return {a: prompts.ROLES.get(a, prompts.DEFAULT_ROLE) for a in self._ids}

    def describe(self) -> str:
        return prompts.DESCRIPTIONS[self.task_type]

    def default_policies(self) -> Policies:
        roles = self.agent_roles()
        final = prompts.FINAL_FORMAT[self.task_type]
        policies = {a: prompts.POLICY.format(agent_id=a, role=roles[a]) for a in self._ids}
        last = self._ids[-1]
        policies[last] = prompts.FINAL_POLICY.format(
            agent_id=last, role=roles[last], final_format=final
        )
        return policies

    def sample_tasks(
        self, n: int, *, split: str = "train", rng: random.Random | None = None
    ) -> list[Task]:
        """``n`` tasks of ``split`` (``train`` or ``test``), sampled with ``rng``."""
        if split not in self.splits:
            raise EnvError(f"Unknown split {split!r}; use 'train' or 'test'.")
        return sample(self.splits[split], n, rng or random.Random())

    # -- step API (one episode at a time) ---------------------------------------------------
    def reset(self, task: Task) -> dict[AgentId, str]:
        """Start an episode; the first agent's observation is the task."""
        self._episode = {"task": task, "history": [], "turn": 0}
        first = build_observation(task, [], self._ids[0], len(self._ids) == 1)
        return {agent_id: first if i == 0 else "" for i, agent_id in enumerate(self._ids)}

    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        """The current agent acts; returns the next agent's observation, and the reward
        once the last agent has answered.

        Raises:
            EnvError: before ``reset``, or when ``agent_id`` is not the agent whose turn it is.
        """
        if self._episode is None:
            raise EnvError("Call reset(task) before step().")
        turn = self._episode["turn"]
        if turn >= len(self._ids) or agent_id != self._ids[turn]:
            expected = self._ids[turn] if turn < len(self._ids) else "nobody (episode done)"
            raise EnvError(f"It is {expected}'s turn, not {agent_id!r}.")
        history: list[Step] = self._episode["history"]
        history.append(Step(agent_id=agent_id, action=action))
        self._episode["turn"] = turn + 1
        if turn + 1 < len(self._ids):
            last = turn + 2 == len(self._ids)
            nxt = build_observation(self._episode["task"], history, self._ids[turn + 1], last)
            return nxt, 0.0, False, {}
        reward, details = run_sync(self.score(self._episode["task"], action))
        return "", reward, True, details

    # -- whole episodes ---------------------------------------------------------------------
    async def collect_trajectory(self, policies: Policies, task: Task) -> Trajectory:
        """Run the team on ``task`` (episode state is local, so episodes run concurrently).

        Raises:
            EnvError: if no actor LLM is set or a policy is missing.
            LLMError: if an actor call fails after the client's retries.
        """
        actor = self.actor_for(policies)
        steps: list[Step] = []
        for index, agent_id in enumerate(self._ids):
            observation = build_observation(task, steps, agent_id, index == len(self._ids) - 1)
            action = await actor.achat_policy(policies[agent_id], observation)
            steps.append(Step(agent_id=agent_id, observation=observation, action=action))
        reward, details = await self.score(task, steps[-1].action)
        kind = str(task.get("task_type", self.task_type))
        metadata = {"env": self.name, "task_type": self.task_type, "task_id": task.get("id")}
        metadata["reward_details"] = details
        metadata[facts.FACTS_KEY] = facts.verifier_facts(kind, task, steps[-1].action, details)
        return Trajectory(
            task=task, steps=steps, reward=reward, agent_ids=self.agent_ids, metadata=metadata
        )

    def _judge(self) -> LLMClient:
        if self.judge_llm is None:
            self.judge_llm = LLMClient(self.config.get_critic_llm(), role="judge")
        return self.judge_llm

    async def score(self, task: Task, output: str) -> tuple[float, Details]:
        """The reward of the final ``output`` on ``task`` and how it was found."""
        kind = str(task.get("task_type", self.task_type))
        if kind == "math":
            return rewards.math_reward(output, str(task.get("ground_truth", "")))
        if kind == "coding":
            return await rewards.coding_reward(output, task)
        if kind == "writing":
            return await rewards.writing_reward(output, task, self._judge())
        result = rewards.qa_reward(output, str(task.get("ground_truth", "")))
        if self.config.use_verified_reward and result[0] < 1.0:
            return await rewards.verify_qa(output, task, self._judge(), result)
        return result
