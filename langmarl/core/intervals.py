"""95% confidence intervals of held-out scores (pure functions).

Decisions:

- Rewards that are all 0 or 1 are success rates: the **Wilson** score interval, which stays
  inside [0, 1] and is not degenerate at 0/n or n/n (the normal approximation is).
- Any other rewards (F1, judge scores) are means: a **Student t** interval. With a single
  episode the spread is unknown, so the bounds are ``None`` rather than invented.
- No values at all is a caller error (``ValueError``): an evaluation always has episodes.
- A t interval is clipped to the reward's declared range when the caller knows it (an
  environment's ``reward_range``): a reward in [0, 1] never reads ``[-0.59, 1.26]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

Method = Literal["wilson", "t"]
Z_95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal."""
T_95 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
    17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
    25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
    120: 1.980,
}  # fmt: skip
"""Two-sided 95% quantiles of Student's t by degrees of freedom (beyond 120: the normal)."""


class ScoreInterval(BaseModel):
    """A mean score with its 95% confidence interval.

    Attributes:
        mean: The mean reward (the success rate for 0/1 rewards).
        low: Lower bound (``None`` when it cannot be estimated: one non-binary value).
        high: Upper bound (likewise).
        n: Number of values (episodes).
        method: ``wilson`` (success rate) or ``t`` (mean reward).
    """

    model_config = ConfigDict(frozen=True)

    mean: float
    low: float | None
    high: float | None
    n: int
    method: Method

    def describe(self) -> str:
        """``"0.500 [0.237, 0.763] n=8 (Wilson)"``."""
        name = {"wilson": "Wilson", "t": "t"}[self.method]
        bounds = "[n/a]" if self.low is None else f"[{self.low:.3f}, {self.high:.3f}]"
        return f"{self.mean:.3f} {bounds} n={self.n} ({name})"


def t_quantile(df: int) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (``df >= 1``); for
    degrees of freedom between table rows the next smaller row (a slightly wider interval)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df > max(T_95):
        return Z_95
    return T_95[max(k for k in T_95 if k <= df)]


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a success rate ``successes / n`` (``n >= 1``)."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {successes}/{n}")
    p = successes / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, center - half), min(1.0, center + half)


def _wilson(values: Sequence[float]) -> ScoreInterval:
    n = len(values)
    successes = sum(1 for v in values if v == 1.0)
    low, high = wilson_interval(successes, n)
    return ScoreInterval(mean=successes / n, low=low, high=high, n=n, method="wilson")


def _t(values: Sequence[float]) -> ScoreInterval:
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return ScoreInterval(mean=mean, low=None, high=None, n=n, method="t")
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile(n - 1) * math.sqrt(variance / n)
    return ScoreInterval(mean=mean, low=mean - half, high=mean + half, n=n, method="t")


_METHODS: dict[Method, Callable[[Sequence[float]], ScoreInterval]] = {
    "wilson": _wilson,
    "t": _t,
}


def interval_method(values: Sequence[float]) -> Method:
    """``wilson`` when every value is 0 or 1, else ``t``."""
    return "wilson" if all(v in (0.0, 1.0) for v in values) else "t"


def score_interval(
    values: Sequence[float],
    method: Method | None = None,
    bounds: tuple[float, float] | None = None,
) -> ScoreInterval:
    """The mean of ``values`` with a 95% interval (method chosen by
    :func:`interval_method` unless given), clipped to ``bounds`` (the reward's declared
    range) when given.

    Raises:
        ValueError: if ``values`` is empty.
    """
    if not values:
        raise ValueError("score_interval needs at least one value (no episodes were scored)")
    interval = _METHODS[method or interval_method(values)](list(values))
    if bounds is None or interval.low is None or interval.high is None:
        return interval
    low, high = bounds
    clipped = {"low": max(interval.low, low), "high": min(interval.high, high)}
    return interval.model_copy(update=clipped)


def bounds_text(interval: ScoreInterval) -> str:
    """``[low, high]`` to three decimals, or ``n/a`` when there is no interval (n < 2)."""
    if interval.low is None or interval.high is None:
        return "n/a"
    return f"[{interval.low:.3f}, {interval.high:.3f}]"


def heldout_line(before: ScoreInterval, after: ScoreInterval, what: str, greedy: bool) -> str:
    """``Held-out reward: 0.246 → 0.936 (n=20 poster examples, greedy; 95% CI […] → […])``:
    the line both spaces' held-out reports end with."""
    decoding = "greedy; " if greedy else ""
    return (
        f"Held-out reward: {before.mean:.3f} → {after.mean:.3f} (n={after.n} {what} "
        f"examples, {decoding}95% CI {bounds_text(before)} → {bounds_text(after)})"
    )
