"""Input checks shared by the reward modules (imports torch; load only from them)."""

from __future__ import annotations

from typing import Any

from langmarl.core.errors import LangmarlError, MissingDependencyError

try:
    import torch
except ImportError:  # pragma: no cover - depends on the installation
    raise MissingDependencyError("torch", "local", "PARL rewards and critical steps") from None


class RewardInputError(LangmarlError, ValueError):
    """A reward or metric input has the wrong shape, sign or value; the message says which."""


def as_float(value: Any, device: str | torch.device, name: str) -> torch.Tensor:
    """``value`` as a floating tensor.

    A tensor keeps its device (and its dtype when floating; integer and bool tensors become
    the default float dtype), so results follow the inputs and autograd is untouched. Other
    values (numbers, lists) are created on ``device``.
    """
    if isinstance(value, torch.Tensor):
        return value if value.is_floating_point() else value.to(torch.get_default_dtype())
    try:
        return torch.as_tensor(value, dtype=torch.get_default_dtype(), device=device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise RewardInputError(
            f"{name} must be a tensor or a list of numbers, got {value!r}"
        ) from exc


def check_batch(name: str, tensor: torch.Tensor) -> None:
    """Require shape ``(batch_size,)``."""
    if tensor.dim() != 1:
        raise RewardInputError(
            f"{name} must have shape (batch_size,), got {tuple(tensor.shape)}; "
            "pass one value per episode"
        )


def check_same_shape(**tensors: torch.Tensor) -> None:
    """Require every tensor to have the same shape."""
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{name}={shape}" for name, shape in shapes.items())
        raise RewardInputError(f"shapes differ ({listed}); pass one value per episode in each")


def check_non_negative(name: str, tensor: torch.Tensor) -> None:
    """Require every value to be >= 0 (counts and step numbers)."""
    if bool((tensor.detach() < 0).any()):
        raise RewardInputError(f"{name} must be non-negative counts, got {tensor.tolist()}")


def check_positive_number(name: str, value: float) -> None:
    """Require a positive number (``max_subagents``, ``total_training_steps``)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise RewardInputError(f"{name} must be a number > 0, got {value!r}")
