"""Token log-probabilities, completion masks and the policy-gradient loss (pure tensor math).

Shapes: B sequences, C completion positions, L full sequence length, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def completion_mask(completion_ids: torch.Tensor, stop_ids: Sequence[int]) -> torch.Tensor:
    """Which completion tokens were really generated: everything up to and including the first
    stop token; the positions after it are padding.

    The pad id is not used on purpose: tokenizers such as SmolLM2's use the same id for padding
    and end-of-text, so ``ids != pad_id`` would drop the real end-of-text token.

    Args:
        completion_ids: ``(B, C)`` generated token ids.
        stop_ids: Token ids that end a completion (end-of-text, end-of-turn, …).

    Returns:
        ``(B, C)`` float mask (1.0 for scored tokens).
    """
    import torch

    is_stop = torch.zeros_like(completion_ids, dtype=torch.bool)
    for stop in stop_ids:
        is_stop |= completion_ids == stop
    stops_before = torch.cumsum(is_stop.long(), dim=-1) - is_stop.long()
    return (stops_before == 0).float()


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Log-probability of each target token.

    Args:
        logits: ``(B, C, V)`` logits that predict ``targets``.
        targets: ``(B, C)`` token ids.

    Returns:
        ``(B, C)`` log-probabilities (float32).
    """
    import torch

    logits = logits.float()
    picked = torch.gather(logits, -1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


def masked_mean(values: torch.Tensor, mask: torch.Tensor, dim: int | None = None) -> torch.Tensor:
    """Mean of ``values`` where ``mask`` is 1 (over ``dim`` or everything); 0 where empty."""
    total = (values * mask).sum() if dim is None else (values * mask).sum(dim=dim)
    count = mask.sum() if dim is None else mask.sum(dim=dim)
    return total / count.clamp(min=1.0)


def policy_gradient_loss(
    logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    reduction: str = "token",
    normalizer: float | None = None,
) -> torch.Tensor:
    """REINFORCE-style loss ``-A · log π(token)`` over every scored completion token.

    Args:
        logprobs: ``(B, C)`` log-probabilities of the completion tokens under the policy.
        advantages: ``(B,)`` advantage of each completion.
        mask: ``(B, C)`` 1 for real completion tokens, 0 for padding.
        reduction: ``"token"``: divide the sum by the number of scored tokens; ``"sequence"``:
            average each completion over its tokens, then divide by the number of completions.
        normalizer: Divide by this instead of this batch's own count (tokens for ``"token"``,
            sequences for ``"sequence"``); used when gradients accumulate over micro-batches
            so the total equals the loss of the whole batch.

    Returns:
        Scalar loss.
    """
    per_token = -advantages.unsqueeze(-1) * logprobs * mask
    if reduction == "token":
        denominator = float(normalizer) if normalizer is not None else mask.sum().clamp(min=1.0)
        return per_token.sum() / denominator
    if reduction == "sequence":
        per_sequence = per_token.sum(dim=-1) / mask.sum(dim=-1).clamp(min=1.0)
        denominator = float(normalizer) if normalizer is not None else float(per_sequence.numel())
        return per_sequence.sum() / max(denominator, 1.0)
    raise ValueError(f"reduction is {reduction!r}: use 'token' or 'sequence'")
