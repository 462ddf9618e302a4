"""Guardrails on training results: reward hacking by one dominating term, and plateaus.

Pure functions of logged numbers; each returns a warning message or None.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def term_shares(term_means: dict[str, float]) -> dict[str, float]:
    """Each term's share of the summed absolute term means (shares add up to 1)."""
    total = sum(abs(v) for v in term_means.values())
    if total <= 0:
        return {name: 0.0 for name in term_means}
    return {name: abs(value) / total for name, value in term_means.items()}


def dominant_term(term_means: dict[str, float], threshold: float = 0.8) -> str | None:
    """Warn when one term carries more than ``threshold`` of the reward magnitude.

    A single term dominating (e.g. an alive bonus) often means the policy is earning reward
    without showing the behaviour: reward hacking.
    """
    if len(term_means) < 2:
        return None
    shares = term_shares(term_means)
    name = max(shares, key=lambda k: shares[k])
    if shares[name] <= threshold:
        return None
    return (
        f"reward term {name!r} carries {shares[name]:.0%} of the reward magnitude "
        f"(mean {term_means[name]:.3g}/step): the policy may be exploiting it; rescale it or "
        f"strengthen the terms that express the behaviour"
    )


def plateau(values: Sequence[float], window: int = 3, rel_tol: float = 0.05) -> str | None:
    """Warn when the last ``window`` values stay within ``rel_tol`` of their mean.

    Args:
        values: A learning curve (evaluation returns, or intent scores across iterations).
        window: How many trailing points to look at.
        rel_tol: Allowed spread relative to the mean magnitude (absolute below magnitude 1).
    """
    if len(values) < window:
        return None
    tail = np.asarray(values[-window:], dtype=float)
    spread = float(tail.max() - tail.min())
    scale = max(abs(float(tail.mean())), 1.0)
    if spread > rel_tol * scale:
        return None
    return (
        f"plateau: the last {window} values stay within {spread:.3g} (around {tail.mean():.3g}); "
        f"more timesteps or a different reward shape may be needed"
    )


def check_guardrails(
    term_means: dict[str, float], eval_returns: Sequence[float], dominance: float = 0.8
) -> list[str]:
    """All guardrail warnings for one training run."""
    found = [dominant_term(term_means, dominance), plateau(eval_returns)]
    return [warning for warning in found if warning]
