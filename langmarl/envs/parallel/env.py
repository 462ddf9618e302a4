"""`ParallelTasksEnv`: an orchestrator that splits tasks into parallel sub-agents (for PARL).

The trained agent is the ``orchestrator`` (its language policy is its system prompt; in
weight space its model writes the plan). Sub-agents are frozen helpers: they share one
system prompt, get their ids (``subagent_1``, …) from the environment, and call
``subagent_llm`` (by default the orchestrator's client under role ``subagent``).

Each episode's reward is the PARL reward of its execution trace at ``training_step``
(set as training advances by the env's registered training hooks, a
``langmarl.parl.PARLCallback``, which every assembled run gets); the trace, its
PARL terms and its critical/serial steps are in ``Trajectory.metadata``.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from langmarl.core.aio import run_sync
from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import EnvError
from langmarl.core.records import AgentId, Policies, Step, Trajectory
from langmarl.core.validation import config_error
from langmarl.envs.parallel import prompts
from langmarl.envs.parallel.reward import TraceScorer
from langmarl.envs.parallel.runner import (
    EpisodeSettings,
    build_trace,
    run_episode,
    run_stage,
)
from langmarl.envs.parallel.tasks import ParallelTask, load_task_set
from langmarl.envs.parallel.trace import ExecutionTrace, Stage
from langmarl.llm.client import LLMClient

if TYPE_CHECKING:
    from langmarl.config.base import BaseConfig

ORCHESTRATOR: AgentId = "orchestrator"


class ParallelTasksEnv(BaseEnvironment):
    """Orchestrator + concurrent sub-agents on tasks made of independent parts.

    Args:
        task_set: ``arithmetic``, ``documents`` or ``mixed`` (see ``tasks.py``).
        num_tasks: Training tasks generated from ``seed``.
        num_eval_tasks: Evaluation tasks (a different seed).
        seed: Seed of the task generator.
        settings: Episode knobs (:class:`EpisodeSettings`); keyword overrides of its fields
            may also be passed directly (``max_subagents=4``, ``combine="join"``).
        llm: The orchestrator's client (the trainer sets it with ``set_llm``).
        subagent_llm: The sub-agents' client (default: ``llm`` under role ``subagent``).
        reward_fn: A ``PARLReward`` (default: ``PARLReward(**reward_kwargs)`` on first use).
        reward_kwargs: Arguments of the default ``PARLReward`` (λ ranges, annealing steps).
        training_step: The step λ1/λ2 are annealed at (later: :meth:`set_step`).

    Attributes:
        scorer: The step-aware PARL reward of this env's episodes (:class:`TraceScorer`).
    """

    name = "parallel_tasks"
    run_kind = "parl_language"

    def __init__(
        self,
        *,
        task_set: str = "arithmetic",
        num_tasks: int = 32,
        num_eval_tasks: int = 16,
        seed: int = 0,
        settings: EpisodeSettings | None = None,
        llm: LLMClient | None = None,
        subagent_llm: LLMClient | None = None,
        reward_fn: Any = None,
        reward_kwargs: dict[str, Any] | None = None,
        training_step: int = 0,
        **setting_overrides: Any,
    ) -> None:
        super().__init__()
        base = settings or EpisodeSettings()
        try:
            self.settings = EpisodeSettings(**{**base.model_dump(), **setting_overrides})
        except ValidationError as exc:
            raise config_error(exc, EpisodeSettings, "ParallelTasksEnv") from exc
        self.tasks = {
            "train": load_task_set(task_set, num_tasks, seed=seed),
            "eval": load_task_set(task_set, num_eval_tasks, seed=seed + 1),
        }
        self.llm = llm
        self.subagent_llm = subagent_llm
        self.scorer = TraceScorer(self.settings.max_subagents, reward_fn, reward_kwargs,
                                  training_step)  # fmt: skip
        self._episode: dict[str, Any] | None = None

    # --- the BaseEnvironment contract -------------------------------------------------

    @property
    def agent_ids(self) -> list[AgentId]:
        return [ORCHESTRATOR]

    def agent_roles(self) -> dict[AgentId, str]:
        return {ORCHESTRATOR: prompts.ORCHESTRATOR_ROLE}

    def describe(self) -> str:
        return prompts.ENV_DESCRIPTION

    def default_policies(self) -> Policies:
        return {ORCHESTRATOR: prompts.ORCHESTRATOR_POLICY}

    def sample_tasks(
        self, n: int, *, split: str = "train", rng: random.Random | None = None
    ) -> list[dict[str, Any]]:
        """``n`` tasks of ``split`` (``train``/``eval``), as dicts with a ``question`` key."""
        if split not in self.tasks:
            raise EnvError(f"split must be 'train' or 'eval', got {split!r}")
        pool = self.tasks[split]
        picked = (rng or random.Random(0)).choices(pool, k=n)
        return [task_dict(task) for task in picked]

    async def collect_trajectory(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """Run one episode with the orchestrator's policy; reward = PARL of its trace."""
        parsed = ParallelTask.model_validate(task)
        orchestrator, subagents = self._clients()
        trace = await run_episode(
            parsed,
            orchestrator_llm=orchestrator,
            subagent_llm=subagents,
            policy=policies.get(ORCHESTRATOR, prompts.ORCHESTRATOR_POLICY),
            settings=self.settings,
        )
        return self.to_trajectory(parsed, trace)

    # --- traces → trajectories ----------------------------------------------------------

    def set_step(self, step: int) -> None:
        """Reward the next episodes at training step ``step`` (``PARLCallback`` calls it at
        the start of every iteration)."""
        self.scorer.set_step(step)

    @property
    def training_step(self) -> int:
        """The step the next episodes' λ1/λ2 are annealed at."""
        return self.scorer.step

    @property
    def reward_kwargs(self) -> dict[str, Any]:
        """Arguments of the default ``PARLReward`` (λ ranges, annealing steps)."""
        return self.scorer.reward_kwargs

    def parl_terms(self, traces: list[ExecutionTrace]) -> list[dict[str, Any]]:
        """PARL terms and critical/serial steps of ``traces`` at ``training_step``."""
        return self.scorer(traces)

    def to_trajectory(self, task: ParallelTask, trace: ExecutionTrace) -> Trajectory:
        """The trajectory of ``trace``: orchestrator and sub-agent steps, PARL reward."""
        terms = self.parl_terms([trace])[0]
        steps = [Step(agent_id=ORCHESTRATOR, observation=task.prompt, action=trace.plan_text,
                      info={"kind": "plan", "plan_status": trace.plan_status})]  # fmt: skip
        for run in trace.subagent_runs:
            for request, reply in zip(run.requests, run.replies, strict=False):
                steps.append(Step(agent_id=run.agent_id, observation=request, action=reply))
        steps.append(
            Step(agent_id=ORCHESTRATOR, observation="combine", action=trace.final_answer,
                 reward=terms["total_reward"], info={"kind": trace.combine_status})
        )  # fmt: skip
        return Trajectory(
            task=task_dict(task),
            steps=steps,
            reward=terms["total_reward"],
            agent_ids=self.agent_ids,
            metadata={
                "env": self.name,
                "task_id": task.task_id,
                "training_step": self.training_step,
                **trace.summary(),
                "parl": terms,
                "trace": trace.to_dict(),
            },
        )

    # --- the step-by-step API (one episode at a time) ----------------------------------

    def reset(self, task: dict[str, Any]) -> dict[AgentId, str]:
        """Start an episode; the orchestrator's first observation is the planning request.

        ``reset``/``step`` keep one episode's state on the environment (use
        ``collect_trajectory`` for concurrent episodes).
        """
        parsed = ParallelTask.model_validate(task)
        self._episode = {"task": parsed, "phase": "plan"}
        return {ORCHESTRATOR: prompts.PLAN_REQUEST.format(task=parsed.prompt)}

    def step(self, agent_id: AgentId, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        """The orchestrator's plan runs the sub-agents (observation: the combine request);
        its next action is the final answer, which ends the episode with the PARL reward.
        With ``combine="join"`` the plan alone ends the episode."""
        episode = self._episode
        if episode is None or agent_id != ORCHESTRATOR:
            raise EnvError(f"step({agent_id!r}) needs reset() first and agent_id {ORCHESTRATOR!r}")
        task: ParallelTask = episode["task"]
        if episode["phase"] == "plan":
            return self._run_plan(episode, task, action)
        return self._finish(task, episode["plan"], episode["stage"], action, "llm")

    def _run_plan(
        self, episode: dict[str, Any], task: ParallelTask, plan_text: str
    ) -> tuple[str, float, bool, dict[str, Any]]:
        from langmarl.envs.parallel.plan import parse_plan
        from langmarl.envs.parallel.runner import answer_lines, joined_answers

        _, subagents = self._clients()
        plan = parse_plan(plan_text, task.prompt, self.settings.plan_fallback)
        subtasks = plan.subtasks[: self.settings.max_subagents]
        stage: Stage = run_sync(run_stage(subagents, subtasks, task, self.settings, _zero_clock))
        if self.settings.combine == "join":
            return self._finish(task, plan_text, stage, answer_lines(stage), "join")
        episode.update(phase="combine", plan=plan_text, stage=stage)
        request = prompts.COMBINE_REQUEST.format(task=task.prompt, answers=joined_answers(stage))
        return request, 0.0, False, {"num_subagents": len(stage.subagents)}

    def _finish(
        self, task: ParallelTask, plan_text: str, stage: Stage, final: str, status: Any
    ) -> tuple[str, float, bool, dict[str, Any]]:
        trace = build_trace(task, plan_text, stage, final, status, self.settings)
        self._episode = None
        trajectory = self.to_trajectory(task, trace)
        return final, trajectory.reward, True, trajectory.metadata

    def training_callbacks(self) -> list[Any]:
        """Callbacks a ``MonteCarloTrainer`` on this env needs (λ annealing, PARL curves):
        the ``training_hooks`` of its registry spec, which every assembled run (``langmarl
        train``, ``langmarl.build_trainer``) already adds; for hand-built trainers."""
        from langmarl.envs.registry import env_spec

        return env_spec(self.name).training_callbacks(self)

    def subagent_client(self) -> LLMClient:
        """The frozen sub-agents' client (``subagent_llm``, else ``llm`` as ``subagent``)."""
        return self.subagent_llm or self._clients()[1]

    def _clients(self) -> tuple[LLMClient, LLMClient]:
        if self.llm is None:
            raise EnvError(
                "ParallelTasksEnv has no LLM client: pass llm= or call env.set_llm(client) "
                "(the trainer does this)"
            )
        return self.llm, self.subagent_llm or self.llm.with_role("subagent")


def task_dict(task: ParallelTask) -> dict[str, Any]:
    """``task`` as a trajectory's task dict (its fields plus the ``question`` shown)."""
    return {**task.model_dump(mode="json"), "question": task.prompt}


def _zero_clock() -> float:
    return 0.0


def make_parallel_tasks(config: BaseConfig | None = None, **kwargs: Any) -> ParallelTasksEnv:
    """Registry factory: ``make_env("parallel_tasks", config=None, **kwargs)``.

    With a config, its ``seed`` seeds the tasks; a ``ParallelTasksConfig`` (the registered
    config class, which lives above this layer, hence read through its two methods) also
    gives the task set, episode settings and λ schedule. The orchestrator's client is
    ``llm=`` or the one the run's assembly (or ``MonteCarloTrainer``) sets with ``set_llm``:
    the env does not build clients.
    """
    if config is None:
        return ParallelTasksEnv(**kwargs)
    env_kwargs = getattr(config, "env_kwargs", None)
    reward_kwargs = getattr(config, "reward_kwargs", None)
    for name, value in (env_kwargs() if env_kwargs else {}).items():
        kwargs.setdefault(name, value)
    if reward_kwargs is not None:
        kwargs.setdefault("reward_kwargs", reward_kwargs())
    if config.seed is not None:
        kwargs.setdefault("seed", config.seed)
    return ParallelTasksEnv(**kwargs)
