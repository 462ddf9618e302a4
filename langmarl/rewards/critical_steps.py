"""Critical steps: the latency of a parallel workflow, counted along its critical path.

``CriticalSteps = Σ_t (S_main(t) + max_i S_sub,i(t))``: each stage costs the orchestrator's
own steps plus its slowest sub-agent, since the sub-agents of a stage run concurrently.
The serial counterpart (every step one after another) is ``Σ_t (S_main(t) + Σ_i S_sub,i(t))``;
their ratio is the speed-up parallelism bought.

Stages with no sub-agents (e.g. the orchestrator's final "combine" stage) cost only their
main steps. In a batch, stages have a common padded width: pad missing sub-agents with 0
(:func:`pad_stages` does this), which changes neither sum because step counts are >= 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from langmarl.rewards._tensors import RewardInputError, as_float, check_non_negative, torch

nn = torch.nn

Stage = tuple[float, Sequence[float]]
"""One stage as plain numbers: ``(main_steps, [steps of each sub-agent])``."""


def _check_shapes(main_steps: torch.Tensor, sub_steps: torch.Tensor) -> None:
    if main_steps.dim() != 2 or sub_steps.dim() != 3 or sub_steps.shape[:2] != main_steps.shape:
        raise RewardInputError(
            "expected main_steps (batch_size, num_stages) and sub_steps (batch_size, "
            f"num_stages, num_subagents), got {tuple(main_steps.shape)} and "
            f"{tuple(sub_steps.shape)}; pad stages to a common width with pad_stages()"
        )
    check_non_negative("main_steps", main_steps)
    check_non_negative("sub_steps", sub_steps)


def critical_steps(main_steps: torch.Tensor, sub_steps: torch.Tensor) -> torch.Tensor:
    """``Σ_t (main[:, t] + max_i sub[:, t, i])``, shape ``(batch,)``.

    Args:
        main_steps: ``(batch, stages)`` orchestrator steps per stage.
        sub_steps: ``(batch, stages, subagents)`` steps of each sub-agent; ``subagents`` may
            be 0 (then every stage costs its main steps only).
    """
    _check_shapes(main_steps, sub_steps)
    if sub_steps.shape[2] == 0:
        return main_steps.sum(dim=1)
    return (main_steps + sub_steps.amax(dim=2)).sum(dim=1)


def serial_steps(main_steps: torch.Tensor, sub_steps: torch.Tensor) -> torch.Tensor:
    """``Σ_t (main[:, t] + Σ_i sub[:, t, i])``: the same work done one step at a time."""
    _check_shapes(main_steps, sub_steps)
    return main_steps.sum(dim=1) + sub_steps.sum(dim=(1, 2))


def pad_stages(
    episodes: Sequence[Sequence[Stage]], device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Ragged episodes → ``(main_steps, sub_steps)`` tensors padded with zeros.

    Args:
        episodes: Per episode, its stages as ``(main_steps, [sub-agent steps])``.

    Returns:
        ``main_steps`` ``(batch, max_stages)`` and ``sub_steps``
        ``(batch, max_stages, max_subagents)``; missing stages and sub-agents are 0.
    """
    num_stages = max((len(stages) for stages in episodes), default=0)
    width = max((len(subs) for stages in episodes for _, subs in stages), default=0)
    main = torch.zeros(len(episodes), num_stages, device=device)
    sub = torch.zeros(len(episodes), num_stages, width, device=device)
    for b, stages in enumerate(episodes):
        for t, (main_count, subs) in enumerate(stages):
            main[b, t] = float(main_count)
            if subs:
                sub[b, t, : len(subs)] = torch.tensor([float(s) for s in subs])
    return main, sub


class CriticalStepsMetric(nn.Module):
    """Critical path length of parallel execution (differentiable).

    Args:
        orchestration_overhead: Stored for API compatibility; as in the reference it is not
            used by the computation (the orchestrator's cost comes in through ``main_steps``).
    """

    def __init__(self, orchestration_overhead: float = 0.1) -> None:
        super().__init__()
        self._orchestration_overhead = float(orchestration_overhead)

    @property
    def orchestration_overhead(self) -> float:
        """The stored overhead (read-only)."""
        return self._orchestration_overhead

    def extra_repr(self) -> str:
        return f"orchestration_overhead={self._orchestration_overhead}"

    def forward(self, main_steps: torch.Tensor, sub_steps: torch.Tensor) -> torch.Tensor:
        """Critical steps per episode, shape ``(batch,)``; see :func:`critical_steps`."""
        main = as_float(main_steps, "cpu", "main_steps")
        sub = as_float(sub_steps, main.device, "sub_steps")
        return critical_steps(main, sub)

    def serial(self, main_steps: torch.Tensor, sub_steps: torch.Tensor) -> torch.Tensor:
        """Serial steps per episode, shape ``(batch,)``; see :func:`serial_steps`."""
        main = as_float(main_steps, "cpu", "main_steps")
        sub = as_float(sub_steps, main.device, "sub_steps")
        return serial_steps(main, sub)
