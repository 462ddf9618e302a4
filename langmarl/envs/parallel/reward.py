"""PARL reward and critical steps computed from execution traces (imports torch lazily)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langmarl.envs.parallel.trace import ExecutionTrace

if TYPE_CHECKING:
    import torch

    from langmarl.rewards.parl import PARLReward


def trace_features(trace: ExecutionTrace) -> list[float]:
    """The trajectory features behind ``r_perf``: ``[accuracy]`` (share of parts right)."""
    return [trace.accuracy]


def parl_inputs(traces: Sequence[ExecutionTrace], device: str = "cpu") -> dict[str, torch.Tensor]:
    """The PARL and critical-step inputs of a batch of traces, as tensors.

    Returns:
        ``num_subagents``, ``assigned_subtasks``, ``completed_subtasks``, ``success``
        ``(batch,)``; ``trajectory_features`` ``(batch, 1)``; ``main_steps``
        ``(batch, stages)`` and ``sub_steps`` ``(batch, stages, subagents)``, zero-padded.
    """
    import torch

    from langmarl.rewards.critical_steps import pad_stages

    def column(values: list[float]) -> torch.Tensor:
        return torch.tensor(values, dtype=torch.get_default_dtype(), device=device)

    main, sub = pad_stages([trace.stage_steps() for trace in traces], device=device)
    return {
        "num_subagents": column([t.num_subagents for t in traces]),
        "assigned_subtasks": column([t.assigned_subtasks for t in traces]),
        "completed_subtasks": column([t.completed_subtasks for t in traces]),
        "success": column([float(t.success) for t in traces]),
        "trajectory_features": torch.tensor(
            [trace_features(t) for t in traces], dtype=torch.get_default_dtype(), device=device
        ),
        "main_steps": main,
        "sub_steps": sub,
    }


def score_traces(
    traces: Sequence[ExecutionTrace],
    reward_fn: PARLReward,
    training_step: int,
    max_subagents: int,
) -> list[dict[str, Any]]:
    """Per episode: every PARL term, critical and serial steps, as floats.

    ``max_subagents`` normalizes ``r_parallel``: pass the environment's cap, so a plan that
    uses every allowed sub-agent earns ``r_parallel = 1``.
    """
    from langmarl.rewards.critical_steps import CriticalStepsMetric

    if not traces:
        return []
    inputs = parl_inputs(traces, device=reward_fn.device)
    terms = reward_fn.compute_full_reward(
        num_subagents=inputs["num_subagents"],
        trajectory_features=inputs["trajectory_features"],
        success=inputs["success"],
        training_step=training_step,
        max_subagents=max_subagents,
        completed_subtasks=inputs["completed_subtasks"],
        assigned_subtasks=inputs["assigned_subtasks"],
    )
    metric = CriticalStepsMetric()
    critical = metric(inputs["main_steps"], inputs["sub_steps"])
    serial = metric.serial(inputs["main_steps"], inputs["sub_steps"])
    rows = []
    for i in range(len(traces)):
        row = {key: float(value[i]) for key, value in terms.items() if value.dim() == 1}
        row |= {key: float(value) for key, value in terms.items() if value.dim() == 0}
        row |= {"critical_steps": float(critical[i]), "serial_steps": float(serial[i])}
        rows.append(row)
    return rows


class TraceScorer:
    """The PARL reward of execution traces at the current training step.

    The one step-aware reward of PARL, in both spaces: the trainer tells it the step with
    :meth:`set_step` before the step's episodes are scored (language space: ``PARLCallback``
    through ``ParallelTasksEnv.set_step``, per iteration; weight space: the
    ``WeightSpaceTrainer`` loop, per GRPO step), and λ at that step comes from the
    ``PARLReward`` schedule. Nothing else anneals.

    Args:
        max_subagents: Normalizes ``r_parallel`` (the environment's cap).
        reward_fn: A ``PARLReward`` (default: ``PARLReward(**reward_kwargs)`` on first use,
            so building a scorer does not import torch).
        reward_kwargs: Arguments of the default ``PARLReward`` (λ ranges, annealing steps).
        step: The step λ is annealed at until :meth:`set_step` says otherwise.
    """

    def __init__(
        self,
        max_subagents: int,
        reward_fn: PARLReward | None = None,
        reward_kwargs: dict[str, Any] | None = None,
        step: int = 0,
    ) -> None:
        self.max_subagents = max_subagents
        self._reward_fn = reward_fn
        self.reward_kwargs = dict(reward_kwargs or {})
        self.step = step

    def set_step(self, step: int) -> None:
        """Score the next episodes at training step ``step`` (λ1(step), λ2(step))."""
        self.step = step

    @property
    def reward_fn(self) -> PARLReward:
        """The ``PARLReward`` (built from ``reward_kwargs`` on first use)."""
        if self._reward_fn is None:
            from langmarl.rewards.parl import PARLReward

            self._reward_fn = PARLReward(**self.reward_kwargs)
        return self._reward_fn

    def __call__(self, traces: Sequence[ExecutionTrace]) -> list[dict[str, Any]]:
        """Per episode: every PARL term at :attr:`step`, critical and serial steps."""
        return score_traces(traces, self.reward_fn, self.step, self.max_subagents)
