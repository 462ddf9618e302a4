"""The small abstract bases of language-space training.

``BaseEnvironment``, ``BaseAgent``, ``BaseCritic``, ``BaseReward`` and ``BaseOptimizer`` are
the reference API's abstractions. Each sync method has an async twin (``a``-prefixed) that
the trainer calls: the default twin runs the sync method in a worker thread, so a subclass may
implement either side. Subclasses that call LLMs should implement the async side and let the
sync one wrap it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langmarl.core.records import AgentId, Evaluation, Policies, PolicyUpdate, Trajectory

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

DEFAULT_POLICY = (
    "You are {agent_id}, one member of a team of agents. {role}\n"
    "Read the task and your teammates' work carefully, do your part well, and be concise."
)
"""Starting policy of an agent whose environment does not provide one."""


@runtime_checkable
class StepAware(Protocol):
    """Something whose behaviour follows training progress (an annealed reward term, as
    PARL's λ): told the step, it keeps its own schedule.

    Trainers call ``set_step(step)`` before each step (weight space: steps finished so far;
    language space: the iteration) and again after a resume; held-out evaluation calls it
    with the end of training, so every checkpoint is scored on the objective training ends on.
    """

    def set_step(self, step: int) -> None: ...


@runtime_checkable
class ScoresOutputs(Protocol):
    """An environment that can score any combination of its agents' outputs on a task
    without running an episode (the pool search recombines answers with it)."""

    def score_outputs(
        self, task: dict[str, Any], outputs: dict[AgentId, str]
    ) -> tuple[float, dict[AgentId, float]]:
        """The team reward of ``outputs`` on ``task`` and each agent's credit."""
        ...


class BaseEnvironment(ABC):
    """An environment in which a team of language agents acts.

    Contract:
        - ``reset(task)`` starts an episode and returns each agent's first observation.
        - ``step(agent_id, action)`` applies one agent's action and returns
          ``(observation, reward, done, info)``.
        - ``collect_trajectory(policies, task)`` runs a whole episode with the given policies
          and returns a :class:`Trajectory` whose ``reward`` is the episode reward. It may be
          ``async def`` (preferred for LLM-driven envs) or a plain method; the trainer calls
          :meth:`acollect_trajectory`, which handles both.
        - These three are all a subclass must write (the reference API's contract). The rest
          has defaults a trainer reads as declared here, never by probing the object:
        - ``agent_ids`` names the agents, in turn order. These names are used unchanged by
          policies, checkpoints, critic prompts and credit parsing; nothing else invents ids.
          An env that does not override it has ``agent_1`` .. ``agent_<num_agents>``, the
          number the trainer takes from the run config's ``num_agents``.
        - Actors call ``self.llm`` (an :class:`LLMClient`), which the run's assembly sets with
          :meth:`set_llm` so actor usage is attributed to the ``actor`` role; an env with
          ``uses_judge`` gets the ``judge`` client in ``judge_llm`` the same way.
        - Environments must be safe to run several episodes of concurrently
          (``collect_trajectory`` keeps per-episode state local).
    """

    name: str = ""
    """Registered name (for run metadata); a subclass that sets none has its class name."""
    reward_range: tuple[float, float] | None = None
    """The range every episode reward lies in, if the env declares one: held-out intervals
    are clipped to it."""
    run_kind: str = "language"
    """The kind of run a language-space trainer records for this env
    (:mod:`langmarl.store.kinds`)."""
    llm: LLMClient | None = None
    """The actors' client (set by the run's assembly)."""
    uses_judge: bool = False
    """Whether episodes ask a judge LLM; such an env gets the run's ``judge`` client in
    :attr:`judge_llm` when it has none."""
    judge_llm: LLMClient | None = None
    """The judge's client, for an env that :attr:`uses_judge`."""
    splits: dict[str, list[dict[str, Any]]] | None = None
    """The env's fixed task sets by split (``train``, ``test``), if it has them: held-out
    evaluation takes a split whole and validation counts the training tasks; ``None``: tasks
    come from :meth:`sample_tasks` only."""
    num_agents: int = 2
    """Team size of an env that keeps the default :attr:`agent_ids`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:
            cls.name = cls.__name__

    def __init__(self, config: Any = None) -> None:
        """``config`` is accepted (and not kept) so that a subclass without its own
        ``__init__`` can be built by the registry, which passes the run config."""
        self.llm = None

    def size_team(self, num_agents: int) -> None:
        """Take the run config's ``num_agents`` as the team size, unless the env names its
        agents itself (:meth:`names_its_agents`)."""
        if not self.names_its_agents():
            self.num_agents = num_agents

    @property
    def agent_ids(self) -> list[AgentId]:
        """The agents' ids, in turn order (default: ``agent_1`` .. ``agent_<num_agents>``)."""
        return [f"agent_{n}" for n in range(1, self.num_agents + 1)]

    @classmethod
    def names_its_agents(cls) -> bool:
        """Whether the env overrides :attr:`agent_ids` (else the run config's
        ``num_agents`` sets how many default ids it has)."""
        return cls.agent_ids is not BaseEnvironment.agent_ids

    def agent_roles(self) -> dict[AgentId, str]:
        """Agent id → one sentence describing its role (shown to the critic)."""
        return {agent_id: "" for agent_id in self.agent_ids}

    def describe(self) -> str:
        """What the team is doing and how it is scored: the critic's context."""
        return ""

    def default_policies(self) -> Policies:
        """The policies training starts from, keyed by ``agent_ids``."""
        roles = self.agent_roles()
        return {
            agent_id: DEFAULT_POLICY.format(agent_id=agent_id, role=roles.get(agent_id, ""))
            for agent_id in self.agent_ids
        }

    def sample_tasks(
        self, n: int, *, split: str = "train", rng: random.Random | None = None
    ) -> list[dict[str, Any]]:
        """``n`` tasks for one iteration. Environments without a task set return empty
        tasks (each episode starts from ``reset({})``); override for datasets."""
        return [{} for _ in range(n)]

    def set_llm(self, client: LLMClient) -> None:
        """Set the client the actors use."""
        self.llm = client

    def check_policies(self, policies: Policies) -> None:
        """Raise ``EnvError`` unless ``policies`` has a policy for every agent."""
        from langmarl.core.errors import EnvError

        missing = [a for a in self.agent_ids if a not in policies]
        if missing:
            raise EnvError(
                f"No policy for agents {missing} (got {sorted(policies)}); policies must be "
                f"keyed by the environment's agent ids {self.agent_ids}."
            )

    def actor_for(self, policies: Policies) -> LLMClient:
        """The actor client, once ``policies`` cover every agent: what an episode checks
        before it starts.

        Raises:
            EnvError: if an agent has no policy, or no actor LLM is set.
        """
        from langmarl.core.errors import EnvError

        self.check_policies(policies)
        if self.llm is None:
            name = type(self).__name__
            raise EnvError(f"{name} has no actor LLM: call env.set_llm(client) first.")
        return self.llm

    @abstractmethod
    def reset(self, task: dict[str, Any]) -> dict[AgentId, str]:
        """Start an episode on ``task``; return each agent's first observation."""

    @abstractmethod
    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        """Apply ``agent_id``'s ``action``; return ``(observation, reward, done, info)``."""

    @abstractmethod
    def collect_trajectory(
        self, policies: Policies, task: dict[str, Any]
    ) -> Trajectory | Awaitable[Trajectory]:
        """Run one episode with ``policies`` (keyed by ``agent_ids``) on ``task``."""

    async def acollect_trajectory(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """Run :meth:`collect_trajectory`, awaiting it if async, else in a worker thread."""
        if inspect.iscoroutinefunction(self.collect_trajectory):
            return await self.collect_trajectory(policies, task)
        result = await asyncio.to_thread(self.collect_trajectory, policies, task)
        if inspect.isawaitable(result):
            return await result
        return result


class Exploring:
    """A mixin for environments whose actors can be told to sample: greedy (or the actor's
    own ``greedy`` temperature) by default, ``temperature`` inside :meth:`exploring`.

    Trainers that explore (the pool search) switch it around their exploration episodes, so
    validation and held-out evaluation stay on the default. Phases run one after another, so
    no greedy episode runs while a block is open.
    """

    greedy: float | None = 0.0
    """The temperature outside :meth:`exploring` (``None``: the actor's configured one)."""
    temperature: float | None = 0.0
    """The temperature episodes use now."""

    @contextlib.contextmanager
    def exploring(self, temperature: float) -> Iterator[None]:
        """Actors sample at ``temperature`` inside the block."""
        self.temperature = temperature
        try:
            yield
        finally:
            self.temperature = self.greedy


class BaseAgent(ABC):
    """An agent whose behaviour is a language policy (its system prompt)."""

    @abstractmethod
    def act(self, observation: str, policy: str) -> str:
        """Return the action text for ``observation`` under ``policy``."""

    async def aact(self, observation: str, policy: str) -> str:
        """Async :meth:`act` (default: in a worker thread)."""
        return await asyncio.to_thread(self.act, observation, policy)


class LLMAgent(BaseAgent):
    """An agent that asks an LLM: the policy is the system prompt, the observation the user
    message.

    Args:
        llm: The client to call (create it with ``role="actor"`` and the run's ledger).
        max_tokens: Reply length limit (default: the client config's ``max_tokens``).
    """

    def __init__(self, llm: LLMClient, max_tokens: int | None = None) -> None:
        self.llm = llm
        self.max_tokens = max_tokens

    def act(self, observation: str, policy: str) -> str:
        return self.llm.chat_policy(policy, observation, max_tokens=self.max_tokens)

    async def aact(self, observation: str, policy: str) -> str:
        return await self.llm.achat_policy(policy, observation, max_tokens=self.max_tokens)


class BaseCritic(ABC):
    """Evaluates trajectories and assigns credit to agents."""

    llm: LLMClient | None = None
    """The critic's client, if it calls an LLM (the run's ledger records it as ``critic``)."""

    @abstractmethod
    def evaluate(self, trajectory: Trajectory, policies: Policies) -> Evaluation:
        """Evaluate ``trajectory``; ``per_agent`` maps each agent id to its feedback."""

    async def aevaluate(
        self,
        trajectory: Trajectory,
        policies: Policies,
        context: str = "",
        roles: dict[AgentId, str] | None = None,
    ) -> Evaluation:
        """Async :meth:`evaluate`; ``context`` is the environment's description and
        ``roles`` its agents' roles (critics may use them in their prompts)."""
        return await asyncio.to_thread(self.evaluate, trajectory, policies)


class BaseReward(ABC):
    """Computes a trajectory's reward (e.g. a verified reward replacing the env's)."""

    @abstractmethod
    def compute(self, trajectory: Trajectory) -> float:
        """The reward of ``trajectory``."""

    async def acompute(self, trajectory: Trajectory) -> float:
        """Async :meth:`compute` (default: in a worker thread)."""
        return await asyncio.to_thread(self.compute, trajectory)


class BaseOptimizer(ABC):
    """Turns evaluations into language gradients and gradients into new policies."""

    llm: LLMClient | None = None
    """The optimizer's client, if it calls an LLM (recorded as ``optimizer``)."""

    @abstractmethod
    def generate_gradient(self, policy: str, evaluation: str, context: str) -> str:
        """An improvement instruction for one agent."""

    @abstractmethod
    def apply_gradient(self, policy: str, gradient: str) -> str:
        """The policy with ``gradient`` applied."""

    @abstractmethod
    def aggregate_gradients(self, gradients: list[str]) -> str:
        """One gradient summarizing ``gradients`` (from several episodes)."""

    async def agenerate_gradient(
        self, policy: str, evaluation: str, context: str, agent_name: str = "agent"
    ) -> str:
        """Async :meth:`generate_gradient` (default: in a worker thread)."""
        return await asyncio.to_thread(self.generate_gradient, policy, evaluation, context)

    async def agenerate_shared_gradient(self, evaluation: str, task_context: str) -> str:
        """A gradient for the whole team (``central_global``); default: a per-agent
        gradient for an empty policy."""
        return await self.agenerate_gradient("", evaluation, task_context, "team")

    async def aaggregate(self, gradients: list[str], agent_name: str = "agent") -> str:
        """Aggregate gradients; default: :meth:`aggregate_gradients`."""
        return self.aggregate_gradients(gradients)

    async def aupdate_policy(
        self, policy: str, gradient: str, agent_name: str = "agent"
    ) -> PolicyUpdate:
        """Update one policy; default: :meth:`apply_gradient` (method ``append``)."""
        return PolicyUpdate(
            agent_id=agent_name,
            method="append",
            new_policy=self.apply_gradient(policy, gradient),
            aggregated_gradient=gradient,
        )
