"""Group-relative advantages (pure functions over tensors).

A group is the G completions one agent sampled at one tree node; ``values[..., g]`` is the
credit (mean return) of completion g.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from langmarl.core.errors import ConfigError

if TYPE_CHECKING:
    import torch


def _mean_baseline(values: torch.Tensor) -> torch.Tensor:
    return values - values.mean(dim=-1, keepdim=True)


def _raw(values: torch.Tensor) -> torch.Tensor:
    return values.clone()


def _max_baseline(values: torch.Tensor) -> torch.Tensor:
    return values - values.max(dim=-1, keepdim=True).values


def _leave_one_out(values: torch.Tensor) -> torch.Tensor:
    size = values.shape[-1]
    if size < 2:
        raise ValueError("'rloo' advantages need at least 2 completions per group")
    others = (values.sum(dim=-1, keepdim=True) - values) / (size - 1)
    return values - others


ADVANTAGE_MODES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "mean": _mean_baseline,
    "raw": _raw,
    "max": _max_baseline,
    "rloo": _leave_one_out,
}


def group_advantages(
    values: torch.Tensor, mode: str = "mean", normalize: bool = False, eps: float = 1e-6
) -> torch.Tensor:
    """Advantages of every completion relative to its group.

    Args:
        values: ``(..., G)`` credits; the last dimension is the group.
        mode: ``"mean"`` (v - mean), ``"raw"`` (v), ``"max"`` (v - max), ``"rloo"``
            (v - mean of the other G-1).
        normalize: Divide by the group's standard deviation (+ eps).
        eps: Keeps the division finite for groups with equal values.

    Returns:
        ``(..., G)`` advantages.
    """
    if mode not in ADVANTAGE_MODES:
        raise ConfigError(f"advantage_mode is {mode!r}: use one of {sorted(ADVANTAGE_MODES)}")
    advantages = ADVANTAGE_MODES[mode](values)
    if normalize:
        std = values.std(dim=-1, keepdim=True, unbiased=False) if values.shape[-1] > 1 else None
        if std is not None:
            advantages = advantages / (std + eps)
    return advantages


def normalize_batch(advantages: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Whiten a flat batch of advantages (zero mean, unit std); a single value is centred only."""
    centred = advantages - advantages.mean()
    if advantages.numel() < 2:
        return centred
    return centred / (advantages.std(unbiased=False) + eps)
