"""KL estimate between the policy and a reference policy from sampled tokens (pure math)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def kl_k3(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token unbiased, non-negative estimate of KL(π ‖ π_ref) on tokens sampled from π.

    ``exp(r) - r - 1`` with ``r = log π_ref - log π`` (Schulman's k3 estimator).

    Args:
        logprobs: ``(B, C)`` log-probabilities under the policy.
        ref_logprobs: ``(B, C)`` log-probabilities under the reference policy.

    Returns:
        ``(B, C)`` estimates (0 where the two agree).
    """
    import torch

    log_ratio = ref_logprobs - logprobs
    return torch.exp(log_ratio) - log_ratio - 1.0
