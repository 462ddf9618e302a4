"""PARL: the three-term reward for an orchestrator that spawns parallel sub-agents.

``r_PARL = λ1(e)·r_parallel + λ2(e)·r_finish + r_perf`` (Kimi K2.5 technical report), where

- ``r_parallel = num_subagents / max_subagents`` rewards spawning sub-agents (against serial
  collapse),
- ``r_finish = completed_subtasks / assigned_subtasks`` rewards finishing what was assigned
  (against spurious parallelism),
- ``r_perf = clamp(mean(trajectory_features) · success, 0, 1)`` is the task outcome,
- ``λ1``, ``λ2`` anneal linearly from their initial to their final values over
  ``total_training_steps``, so the final policy optimizes ``r_perf`` alone.

The schedule is computed here only: :func:`anneal_linear` gives λ at a step, and
:func:`schedule_kwargs` turns a config's λ fields into :class:`PARLReward` arguments, for
language space (``ParallelTasksConfig``, steps = iterations) and weight space
(``OrchestratorGRPOConfig``, steps = GRPO steps) alike. Which step is current is told to the
reward through one hook, ``set_step`` (``langmarl.envs.parallel.reward.TraceScorer``).

The math lives in pure functions (tested directly); :class:`PARLReward` is the reference
API around them. Edge cases, decided deliberately:

- Annealing progress ``e / total_training_steps`` is clamped to ``[0, 1]`` at both ends: a
  negative step gives the initial λ, a step past the end the final λ.
- ``total_training_steps`` must be > 0 (a zero would divide by zero): :class:`ConfigError`.
- dtype and device follow the inputs: a tensor argument keeps its device and floating dtype
  (integer counts become the default float dtype); λ is cast to the inputs' dtype/device.
  Values given as lists/numbers, and λ from ``anneal_lambda*``, are created on ``device``.
- An episode with **zero assigned sub-tasks** has nothing to finish. Its ``r_finish`` is
  ``finish_when_none_assigned`` (default 0.0): a serial episode must not collect the finish
  bonus for free. (The reference's ``completed / (assigned + eps)`` also gives 0 there, but
  only by accident of ``eps``; here it is explicit, and also holds in
  ``compute_full_reward`` when ``completed_subtasks`` is omitted.)
- ``r_parallel`` and ``r_finish`` are clamped to ``[0, 1]``: spawning beyond
  ``max_subagents`` earns nothing more. Negative counts raise :class:`RewardInputError`.
"""

from __future__ import annotations

from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.rewards._tensors import (
    RewardInputError,
    as_float,
    check_batch,
    check_non_negative,
    check_positive_number,
    check_same_shape,
    torch,
)

nn = torch.nn

__all__ = [
    "PARLReward",
    "RewardInputError",
    "anneal_linear",
    "finish_reward",
    "instantiation_reward",
    "parl_total",
    "schedule_kwargs",
    "task_quality",
]

SCHEDULE_FIELDS = ("lambda1_init", "lambda1_final", "lambda2_init", "lambda2_final")
"""The λ fields a config carries (with ``anneal_steps``) for :func:`schedule_kwargs`."""


def anneal_linear(initial: float, final: float, step: float, total_steps: float) -> float:
    """``initial + (final - initial) · clamp(step / total_steps, 0, 1)``.

    Raises:
        ConfigError: if ``total_steps`` is not > 0.
    """
    if (
        isinstance(total_steps, bool)
        or not isinstance(total_steps, int | float)
        or total_steps <= 0
    ):
        raise ConfigError(
            f"total_training_steps must be > 0, got {total_steps!r}; set it to the number of "
            "training steps over which λ anneals"
        )
    progress = min(1.0, max(0.0, step / total_steps))
    return initial + (final - initial) * progress


def schedule_kwargs(settings: Any, run_steps: int) -> dict[str, Any]:
    """:class:`PARLReward` arguments from a config's λ fields: :data:`SCHEDULE_FIELDS` and
    ``anneal_steps`` (λ anneals over ``anneal_steps``, or ``None``: over the whole run of
    ``run_steps`` steps, at least 1)."""
    kwargs = {name: float(getattr(settings, name)) for name in SCHEDULE_FIELDS}
    kwargs["total_training_steps"] = settings.anneal_steps or max(1, run_steps)
    return kwargs


def instantiation_reward(num_subagents: torch.Tensor, max_subagents: float) -> torch.Tensor:
    """``r_parallel = clamp(num_subagents / max_subagents, 0, 1)``; shape ``(batch,)``.

    Raises:
        RewardInputError: for negative counts or ``max_subagents <= 0``.
    """
    check_positive_number("max_subagents", max_subagents)
    check_non_negative("num_subagents", num_subagents)
    return (num_subagents / max_subagents).clamp(0.0, 1.0)


def finish_reward(
    completed: torch.Tensor,
    assigned: torch.Tensor,
    eps: float = 1e-8,
    when_none_assigned: float = 0.0,
) -> torch.Tensor:
    """``r_finish = clamp(completed / (assigned + eps), 0, 1)``, and ``when_none_assigned``
    where ``assigned == 0``; all shapes ``(batch,)``.

    Raises:
        RewardInputError: for negative counts or mismatched shapes.
    """
    check_same_shape(completed_subtasks=completed, assigned_subtasks=assigned)
    check_non_negative("completed_subtasks", completed)
    check_non_negative("assigned_subtasks", assigned)
    rate = (completed / (assigned + eps)).clamp(0.0, 1.0)
    return torch.where(assigned > 0, rate, torch.full_like(rate, when_none_assigned))


def task_quality(features: torch.Tensor, success: torch.Tensor) -> torch.Tensor:
    """``r_perf = clamp(mean(features, dim=1) · success, 0, 1)``.

    Args:
        features: ``(batch, feature_dim)`` with ``feature_dim >= 1``.
        success: ``(batch,)``, 1.0 for success and 0.0 for failure.

    Raises:
        RewardInputError: for wrong shapes or an empty feature dimension.
    """
    if features.dim() != 2 or features.shape[1] == 0:
        raise RewardInputError(
            f"trajectory_features must have shape (batch_size, feature_dim>=1), got "
            f"{tuple(features.shape)}; pass at least one feature per episode"
        )
    check_batch("success", success)
    if features.shape[0] != success.shape[0]:
        raise RewardInputError(
            f"trajectory_features has {features.shape[0]} episodes but success has "
            f"{success.shape[0]}; pass one row per episode"
        )
    return (features.mean(dim=1) * success).clamp(0.0, 1.0)


def parl_total(
    r_parallel: torch.Tensor,
    r_finish: torch.Tensor,
    r_perf: torch.Tensor,
    lambda1: torch.Tensor | float,
    lambda2: torch.Tensor | float,
) -> torch.Tensor:
    """``λ1·r_parallel + λ2·r_finish + r_perf``; all shapes ``(batch,)``."""
    check_same_shape(r_parallel=r_parallel, r_finish=r_finish, r_perf=r_perf)
    return lambda1 * r_parallel + lambda2 * r_finish + r_perf


class PARLReward(nn.Module):
    """Parallel-Agent RL reward: ``λ1·r_parallel + λ2·r_finish + r_perf`` with linear annealing.

    Args:
        lambda1_init: Initial λ1 (weight of ``r_parallel``).
        lambda1_final: Final λ1.
        lambda2_init: Initial λ2 (weight of ``r_finish``).
        lambda2_final: Final λ2.
        total_training_steps: Steps over which λ1 and λ2 anneal; must be > 0.
        device: Where tensors built from non-tensor values (λ, lists) are created.
        lambda_init: (Keyword-only, backward compatible) sets both initial λs.
        lambda_final: (Keyword-only, backward compatible) sets both final λs.
        finish_when_none_assigned: ``r_finish`` of an episode with zero assigned sub-tasks
            (default 0.0; see the module docstring). An addition to the reference API.

    Attributes:
        lambda_init, lambda_final: Equal to λ1's range (backward compatibility).

    Raises:
        ConfigError: if ``total_training_steps`` is not > 0.
    """

    def __init__(
        self,
        lambda1_init: float = 0.1,
        lambda1_final: float = 0.0,
        lambda2_init: float = 0.1,
        lambda2_final: float = 0.0,
        total_training_steps: int = 10000,
        device: str | torch.device = "cpu",
        *,
        lambda_init: float | None = None,
        lambda_final: float | None = None,
        finish_when_none_assigned: float = 0.0,
    ) -> None:
        super().__init__()
        if lambda_init is not None:
            lambda1_init = lambda2_init = lambda_init
        if lambda_final is not None:
            lambda1_final = lambda2_final = lambda_final
        anneal_linear(0.0, 0.0, 0, total_training_steps)  # validates total_training_steps
        self.lambda1_init, self.lambda1_final = float(lambda1_init), float(lambda1_final)
        self.lambda2_init, self.lambda2_final = float(lambda2_init), float(lambda2_final)
        self.lambda_init, self.lambda_final = self.lambda1_init, self.lambda1_final
        self.total_training_steps = total_training_steps
        self.device = str(device)
        self.finish_when_none_assigned = float(finish_when_none_assigned)

    def extra_repr(self) -> str:
        return (
            f"lambda1={self.lambda1_init}->{self.lambda1_final}, "
            f"lambda2={self.lambda2_init}->{self.lambda2_final}, "
            f"total_training_steps={self.total_training_steps}, device={self.device!r}"
        )

    def _scalar(self, value: float) -> torch.Tensor:
        return torch.tensor(value, dtype=torch.get_default_dtype(), device=self.device)

    def anneal_lambda1(self, training_step: int) -> torch.Tensor:
        """λ1 at ``training_step`` (progress clamped to [0, 1]); a scalar tensor on ``device``."""
        return self._scalar(
            anneal_linear(
                self.lambda1_init, self.lambda1_final, training_step, self.total_training_steps
            )
        )

    def anneal_lambda2(self, training_step: int) -> torch.Tensor:
        """λ2 at ``training_step`` (progress clamped to [0, 1]); a scalar tensor on ``device``."""
        return self._scalar(
            anneal_linear(
                self.lambda2_init, self.lambda2_final, training_step, self.total_training_steps
            )
        )

    def anneal_lambda(self, training_step: int) -> torch.Tensor:
        """Backward compatible name for :meth:`anneal_lambda1`."""
        return self.anneal_lambda1(training_step)

    def compute_instantiation_reward(
        self, num_subagents: Any, max_subagents: int = 100
    ) -> torch.Tensor:
        """``r_parallel = clamp(num_subagents / max_subagents, 0, 1)``, shape ``(batch,)``."""
        counts = as_float(num_subagents, self.device, "num_subagents")
        check_batch("num_subagents", counts)
        return instantiation_reward(counts, max_subagents)

    def compute_finish_reward(
        self, completed_subtasks: Any, assigned_subtasks: Any, eps: float = 1e-8
    ) -> torch.Tensor:
        """``r_finish = clamp(completed / (assigned + eps), 0, 1)``; episodes with zero
        assigned sub-tasks get ``finish_when_none_assigned``. Shape ``(batch,)``."""
        completed = as_float(completed_subtasks, self.device, "completed_subtasks")
        assigned = as_float(assigned_subtasks, self.device, "assigned_subtasks")
        check_batch("assigned_subtasks", assigned)
        return finish_reward(completed, assigned, eps, self.finish_when_none_assigned)

    def compute_task_quality(
        self, trajectory_features: Any, success_indicators: Any
    ) -> torch.Tensor:
        """``r_perf = clamp(mean(features) · success, 0, 1)``, shape ``(batch,)``."""
        features = as_float(trajectory_features, self.device, "trajectory_features")
        success = as_float(success_indicators, self.device, "success_indicators")
        return task_quality(features, success.to(features))

    def _lambdas(self, training_step: int, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (
            self.anneal_lambda1(training_step).to(like),
            self.anneal_lambda2(training_step).to(like),
        )

    def forward(
        self, r_parallel: Any, r_finish: Any, r_perf: Any, training_step: int
    ) -> torch.Tensor:
        """``r_PARL = λ1(e)·r_parallel + λ2(e)·r_finish + r_perf``, shape ``(batch,)``."""
        r_par = as_float(r_parallel, self.device, "r_parallel")
        r_fin = as_float(r_finish, self.device, "r_finish")
        r_prf = as_float(r_perf, self.device, "r_perf")
        lambda1, lambda2 = self._lambdas(training_step, r_prf)
        return parl_total(r_par, r_fin, r_prf, lambda1, lambda2)

    def compute_full_reward(
        self,
        num_subagents: Any,
        trajectory_features: Any,
        success: Any,
        training_step: int,
        max_subagents: int = 100,
        completed_subtasks: Any | None = None,
        assigned_subtasks: Any | None = None,
    ) -> dict[str, torch.Tensor]:
        """All PARL terms in one pass (differentiable).

        ``assigned_subtasks`` defaults to ``num_subagents``; ``completed_subtasks`` defaults
        to ``assigned_subtasks`` (everything assigned finished: ``r_finish = 1``, except for
        episodes with nothing assigned, see the class docs).

        Returns:
            ``total_reward``, ``r_parallel``, ``r_finish``, ``r_perf``, ``task_quality``
            (alias of ``r_perf``), ``instantiation_component`` (λ1·r_parallel),
            ``finish_component`` (λ2·r_finish), ``task_component`` (r_perf), all
            ``(batch,)``; ``lambda1``, ``lambda2``, ``lambda_aux`` (= λ1), all ``()``.
        """
        r_parallel = self.compute_instantiation_reward(num_subagents, max_subagents)
        assigned = as_float(
            num_subagents if assigned_subtasks is None else assigned_subtasks,
            self.device,
            "assigned_subtasks",
        )
        completed = assigned if completed_subtasks is None else completed_subtasks
        r_finish = self.compute_finish_reward(completed, assigned)
        r_perf = self.compute_task_quality(trajectory_features, success)
        check_same_shape(num_subagents=r_parallel, success=r_perf)
        lambda1, lambda2 = self._lambdas(training_step, r_perf)
        instantiation, finish = lambda1 * r_parallel, lambda2 * r_finish
        return {
            "total_reward": instantiation + finish + r_perf,
            "r_parallel": r_parallel,
            "r_finish": r_finish,
            "r_perf": r_perf,
            "task_quality": r_perf,
            "lambda1": lambda1,
            "lambda2": lambda2,
            "lambda_aux": lambda1,
            "instantiation_component": instantiation,
            "finish_component": finish,
            "task_component": r_perf,
        }
