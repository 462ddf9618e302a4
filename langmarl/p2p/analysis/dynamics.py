"""How one PPO run learned: trends of its ``metrics/scalars.jsonl`` training rows.

What the trainer logs per rollout (:func:`langmarl.p2p.learner.sb3_trainer.train_row`):
``episodic_return``, ``episode_length``, ``env_reward_mean`` (the env's own reward per
step), ``term_means``, ``steps_per_second`` and ``time_s``. It does not log PPO's losses:
the entropy, value-loss, KL and clip-fraction checks run only on rows that carry them under
stable-baselines3's names (``train/entropy_loss``, ``train/value_loss``, ``train/approx_kl``,
``train/clip_fraction``, with or without the ``train/`` prefix); otherwise the result lists
them in ``missing`` and says so in its notes, instead of guessing.

Decisions:

* A slope is the least-squares fit of value against step, per 1,000 steps. "Early" is the
  first half of the rows, "late" the second half; each half needs two rows, so a run with
  fewer than four rollouts gets no early/late slopes (a note says so).
* A trend is ``flat`` when the fitted change over the rows' span is within
  :data:`FLAT_TOL` (5%) of the series' largest magnitude; ``n/a`` with fewer than two rows.
* SB3 logs ``entropy_loss`` as minus the entropy; the entropy has *collapsed* when its last
  value is lower than its first by more than half the first's magnitude and by more than
  :data:`COLLAPSE_MIN_DROP` nats: the policy stopped exploring.
* A spike is a value above :data:`SPIKE_FACTOR` times the series' median and above a floor
  (approx_kl 0.02, a little above the usual ``target_kl``; clip fraction 0.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

Trend = Literal["rising", "falling", "flat", "n/a"]

FLAT_TOL = 0.05
"""A change within this fraction of the series' magnitude is flat."""
SPIKE_FACTOR = 3.0
"""A spike is above this multiple of the series' median (and above its floor)."""
COLLAPSE_MIN_DROP = 0.5
"""The smallest entropy drop (nats) that counts as a collapse."""
SPIKE_FLOORS = {"approx_kl": 0.02, "clip_fraction": 0.3}
PPO_SCALARS = ("entropy_loss", "value_loss", "approx_kl", "clip_fraction")
"""The PPO losses read when a row has them (SB3's names, ``train/`` prefix optional)."""
LOGGED = ("episodic_return", "episode_length", "env_reward_mean")


class SeriesTrend(BaseModel):
    """One training scalar over the run's rollouts."""

    name: str
    first: float
    last: float
    slope: float | None = None
    """Least-squares slope per 1,000 steps (None with fewer than two rows)."""
    trend: Trend = "n/a"


class IterationDynamics(BaseModel):
    """The training dynamics of one iteration's judged run."""

    iteration: int
    run: str
    """The run directory read, relative to the session (``iter_1`` or ``iter_1/runs/seed_1``)."""
    rollouts: int
    """Training rows (one per PPO rollout)."""
    return_slope_early: float | None = None
    """Slope of ``episodic_return`` over the first half of the rows, per 1,000 steps."""
    return_slope_late: float | None = None
    """The same over the second half."""
    series: list[SeriesTrend] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    """Short tags: ``still_improving``, ``return_stalled``, ``return_declining``,
    ``env_reward_falling``, ``entropy_collapse``, ``value_loss_rising``, ``kl_spikes``,
    ``clip_spikes``."""
    notes: list[str] = Field(default_factory=list)
    """One sentence per flag, and what could not be analysed."""
    missing: list[str] = Field(default_factory=list)
    """PPO scalars the rows do not carry."""


def slope(steps: Sequence[float], values: Sequence[float], per: float = 1000.0) -> float | None:
    """Least-squares slope of ``values`` against ``steps``, per ``per`` steps (None with
    fewer than two points or a single step value)."""
    if len(values) < 2 or len(set(steps)) < 2:
        return None
    xs = np.asarray(steps, float) / per
    return float(np.polyfit(xs, np.asarray(values, float), 1)[0])


def relative_change(steps: Sequence[float], values: Sequence[float]) -> float | None:
    """The fitted change over the span of ``steps``, as a fraction of the largest |value|."""
    fitted = slope(steps, values, per=1.0)
    if fitted is None:
        return None
    scale = max(max(abs(v) for v in values), 1e-9)
    return fitted * (max(steps) - min(steps)) / scale


def trend(steps: Sequence[float], values: Sequence[float], tol: float = FLAT_TOL) -> Trend:
    """``rising``/``falling``/``flat`` by :func:`relative_change` (``n/a`` if it has none)."""
    change = relative_change(steps, values)
    if change is None:
        return "n/a"
    return "flat" if abs(change) <= tol else ("rising" if change > 0 else "falling")


def spikes(values: Sequence[float], floor: float, factor: float = SPIKE_FACTOR) -> list[int]:
    """Indices of the values above ``factor`` x the median and above ``floor``."""
    if not values:
        return []
    limit = max(factor * float(np.median(values)), floor)
    return [i for i, v in enumerate(values) if v > limit]


def series(rows: Sequence[dict[str, Any]], name: str) -> tuple[list[float], list[float]]:
    """``(steps, values)`` of the rows that carry a finite ``name`` (or ``train/<name>``)."""
    steps: list[float] = []
    values: list[float] = []
    for row in rows:
        value = row.get(name, row.get(f"train/{name}"))
        if isinstance(value, int | float) and math.isfinite(value):
            steps.append(float(row.get("step", len(steps))))
            values.append(float(value))
    return steps, values


def _trend_of(name: str, steps: list[float], values: list[float]) -> SeriesTrend:
    return SeriesTrend(
        name=name, first=values[0], last=values[-1], slope=slope(steps, values),
        trend=trend(steps, values),
    )  # fmt: skip


def _return_flags(steps: list[float], values: list[float], found: IterationDynamics) -> None:
    """Early/late return slopes and the flags they raise."""
    if len(values) < 4:
        found.notes.append(f"{len(values)} rollout(s) with a return: too few for early/late slopes")
        return
    half = len(values) // 2
    found.return_slope_early = slope(steps[:half], values[:half])
    found.return_slope_late = slope(steps[half:], values[half:])
    early = relative_change(steps[:half], values[:half]) or 0.0
    late = relative_change(steps[half:], values[half:]) or 0.0
    if late > FLAT_TOL:
        found.flags.append("still_improving")
        found.notes.append(
            f"return still rising over the last half ({late:+.0%}): more timesteps may help"
        )
    elif late < -FLAT_TOL:
        found.flags.append("return_declining")
        found.notes.append(f"return fell over the last half ({late:+.0%})")
    elif early > FLAT_TOL:
        found.flags.append("return_stalled")
        found.notes.append("return rose in the first half, then flattened")


def _ppo_flags(rows: Sequence[dict[str, Any]], found: IterationDynamics) -> None:
    """Entropy collapse, rising value loss, KL and clip-fraction spikes (when logged)."""
    steps, losses = series(rows, "entropy_loss")
    if len(losses) >= 2:
        entropy = [-v for v in losses]
        found.series.append(_trend_of("entropy", steps, entropy))
        if entropy[0] - entropy[-1] > max(0.5 * abs(entropy[0]), COLLAPSE_MIN_DROP):
            found.flags.append("entropy_collapse")
            found.notes.append(f"entropy fell from {entropy[0]:.3g} to {entropy[-1]:.3g}")
    steps, values = series(rows, "value_loss")
    if len(values) >= 2:
        found.series.append(_trend_of("value_loss", steps, values))
        if found.series[-1].trend == "rising":
            found.flags.append("value_loss_rising")
            found.notes.append("value loss rose: the critic is falling behind the returns")
    for name, flag in (("approx_kl", "kl_spikes"), ("clip_fraction", "clip_spikes")):
        steps, values = series(rows, name)
        hits = spikes(values, SPIKE_FLOORS[name])
        if hits:
            found.flags.append(flag)
            at = ", ".join(f"{steps[i]:.0f}" for i in hits[:5])
            found.notes.append(f"{name} spiked at step(s) {at}: updates too large")
    found.missing = [n for n in PPO_SCALARS if not series(rows, n)[1]]
    if found.missing:
        found.notes.append(f"not logged by the trainer: {', '.join(found.missing)}")


def run_dynamics(iteration: int, run: str, rows: Sequence[dict[str, Any]]) -> IterationDynamics:
    """The dynamics of one run from its ``type=train`` scalars rows (in step order).

    Args:
        iteration: The iteration number.
        run: Where the rows come from (shown in the result).
        rows: The run's training rows.
    """
    found = IterationDynamics(iteration=iteration, run=run, rollouts=len(rows))
    for name in LOGGED:
        steps, values = series(rows, name)
        if values:
            found.series.append(_trend_of(name, steps, values))
    steps, returns = series(rows, "episodic_return")
    _return_flags(steps, returns, found)
    trends = {s.name: s.trend for s in found.series}
    if trends.get("episodic_return") == "rising" and trends.get("env_reward_mean") == "falling":
        found.flags.append("env_reward_falling")
        found.notes.append(
            "the custom return rose while the env's own reward per step fell: the reward "
            "may be exploited"
        )
    _ppo_flags(rows, found)
    return found
