"""`ParallelTasksConfig`: a run config for language-space PARL training on ``parallel_tasks``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from langmarl.config.base import BaseConfig


class ParallelTasksConfig(BaseConfig):
    """The orchestrator/sub-agent environment and its PARL reward, for ``MonteCarloTrainer``.

    Fields not listed here are :class:`BaseConfig`'s. ``num_agents`` is ignored: the only
    trained agent is the orchestrator.
    """

    env: str = "parallel_tasks"
    task_set: Literal["arithmetic", "documents", "mixed"] = "arithmetic"
    """Shipped task set."""
    num_tasks: int = Field(default=32, ge=1)
    """Training tasks (generated from ``seed``)."""
    num_eval_tasks: int = Field(default=16, ge=1)
    """Held-out tasks."""
    max_subagents: int = Field(default=8, ge=1)
    """Sub-agents per episode at most; also normalizes ``r_parallel``."""
    max_subagent_steps: int = Field(default=2, ge=1)
    """LLM calls per sub-agent at most."""
    combine: Literal["llm", "join"] = "llm"
    """Who writes the final answer: the orchestrator (``llm``) or the environment (``join``)."""
    plan_fallback: Literal["parts", "single"] = "parts"
    """What an unparseable plan runs: one sub-agent per task part, or one for the whole task."""
    success_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    """Accuracy at or above which an episode succeeds."""
    plan_max_tokens: int = Field(default=96, ge=1)
    """Length limit of the plan."""
    subagent_max_tokens: int = Field(default=48, ge=1)
    """Length limit of each sub-agent reply."""
    combine_max_tokens: int = Field(default=96, ge=1)
    """Length limit of the final answer."""
    lambda1_init: float = 0.1
    """Initial weight of ``r_parallel``."""
    lambda1_final: float = 0.0
    """Final weight of ``r_parallel``."""
    lambda2_init: float = 0.1
    """Initial weight of ``r_finish``."""
    lambda2_final: float = 0.0
    """Final weight of ``r_finish``."""
    anneal_steps: int | None = Field(default=None, ge=1)
    """Iterations over which λ1, λ2 anneal (``None``: ``num_iterations``, at least 1)."""
    episode_generation_workers: int = Field(default=4, ge=1)
    """Concurrent episodes during trajectory generation."""
    rescore_incumbent: bool = True
    """Score the current policy on the validation batch again every iteration: λ anneals,
    so a score from an earlier iteration was measured with another reward."""

    def env_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``ParallelTasksEnv`` (tasks and episode settings)."""
        names = (
            "task_set", "num_tasks", "num_eval_tasks", "max_subagents", "max_subagent_steps",
            "combine", "plan_fallback", "success_threshold", "plan_max_tokens",
            "subagent_max_tokens", "combine_max_tokens",
        )  # fmt: skip
        return {name: getattr(self, name) for name in names}

    def reward_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``PARLReward``: λ anneals over ``anneal_steps`` or the run's
        iterations (:func:`langmarl.rewards.parl.schedule_kwargs`, imports torch)."""
        from langmarl.rewards.parl import schedule_kwargs

        return schedule_kwargs(self, self.num_iterations)
