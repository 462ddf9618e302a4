"""The one next-token sampler, shared by the embedded engine and MAGRPO rollouts.

A :class:`Sampling` rule is greedy at temperature 0 (or when ``greedy`` is set); otherwise the
logits are divided by the temperature, cut to the ``top_k`` most likely tokens, then to the
nucleus (the smallest set of tokens whose mass reaches ``top_p``), and one token is drawn.

Two ways to apply it:

- :func:`sample_tokens`: one rule for every row, vectorized. MAGRPO's G completions of a
  prompt share their settings and the global random state.
- :func:`sample_rows`: a rule and a ``torch.Generator`` per row. The engine's requests each
  carry their own settings and seed, and a seed gives the same text whichever requests share
  its batch, because no row's draw depends on another row's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch loads when a token is sampled, not when a rule is built
    import torch

_TINY = 1.1754943508222875e-38  # torch.finfo(torch.float32).tiny
"""Temperatures below this round the scaled logits to infinities: they decode greedily."""


@dataclass(frozen=True)
class Sampling:
    """How the next token is picked.

    Attributes:
        greedy: Always take the most likely token (evaluation).
        temperature: Divides the logits; 0 is greedy.
        top_p: Nucleus mass in (0, 1]; 1.0 keeps every token.
        top_k: Keep only the k most likely tokens (``None``: all).
    """

    greedy: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int | None = None

    def __post_init__(self) -> None:
        """Refuse settings that would only fail later, inside a batch shared with others.

        Raises:
            ValueError: naming the field, its value and the accepted range.
        """
        if not math.isfinite(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {self.temperature}")
        if not math.isfinite(self.top_p) or not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be >= 1 or None, got {self.top_k}")

    @property
    def is_greedy(self) -> bool:
        """Whether this rule always takes the most likely token."""
        return self.greedy or self.temperature < _TINY


def sample_tokens(
    logits: torch.Tensor, sampling: Sampling, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Pick one token per row with the same rule for every row, vectorized over the batch.

    Args:
        logits: ``(B, V)`` next-token logits.
        sampling: The rule.
        generator: Random source of the draws (``None``: torch's global one).

    Returns:
        ``(B,)`` token ids.
    """
    import torch

    if sampling.is_greedy:
        return logits.argmax(dim=-1)
    # Shifting by the maximum first keeps a tiny temperature from turning the logits into
    # inf - inf = NaN (softmax does not change under a shift).
    scaled = logits.float()
    scaled = (scaled - scaled.amax(dim=-1, keepdim=True)) / sampling.temperature
    if sampling.top_k is not None and sampling.top_k < scaled.shape[-1]:
        kth = torch.topk(scaled, sampling.top_k, dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = torch.softmax(scaled, dim=-1)
    if sampling.top_p < 1.0:
        return nucleus(probs, sampling.top_p, generator)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def sample_rows(
    logits: torch.Tensor, samplings: Sequence[Sampling], generators: Sequence[torch.Generator]
) -> torch.Tensor:
    """Pick one token per row, each row with its own rule and random generator.

    Args:
        logits: ``(B, V)`` next-token logits.
        samplings: B rules.
        generators: B generators; row ``i``'s draw uses only ``generators[i]``.

    Returns:
        ``(B,)`` token ids.
    """
    chosen = logits.argmax(dim=-1)
    for row, sampling in enumerate(samplings):
        if not sampling.is_greedy:
            chosen[row] = sample_tokens(logits[row : row + 1], sampling, generators[row])[0]
    return chosen


def nucleus(
    probs: torch.Tensor,
    top_p: float,
    generator: torch.Generator | None = None,
    heads: tuple[int, ...] = (64, 1024),
) -> torch.Tensor:
    """Sample from the smallest set of tokens whose mass reaches ``top_p`` (per row).

    Exact and cheap: when the k most likely tokens (k in ``heads``) already hold ``top_p`` of
    the mass in every row, the nucleus lies inside them and only they are sorted; otherwise the
    whole vocabulary is.

    Args:
        probs: ``(B, V)`` probabilities.
        top_p: Nucleus mass in (0, 1).
        generator: Random source (``None``: torch's global one).
        heads: Head sizes tried before a full sort.

    Returns:
        ``(B,)`` token ids.
    """
    import torch

    values, order = None, None
    for head in heads:
        values, order = probs.topk(min(head, probs.shape[-1]), dim=-1)
        if bool((values.sum(dim=-1) >= top_p).all()):
            break
        values = None
    if values is None or order is None:
        values, order = probs.sort(dim=-1, descending=True)
    outside = values.cumsum(dim=-1) - values > top_p
    values = values.masked_fill(outside, 0.0)
    picked = torch.multinomial(values, 1, generator=generator)
    return order.gather(-1, picked).squeeze(-1)
