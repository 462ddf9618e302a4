"""Held-out intervals of weight-space runs stay inside the range a return can take: the
task's per-turn reward range times the discounted number of turns."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from langmarl.core.intervals import score_interval
from langmarl.magrpo.heldout import return_bounds
from langmarl.magrpo.tasks import poster_task


def _trainer(reward_range: Any, turns: int = 1, discount: float = 0.9) -> Any:
    return SimpleNamespace(
        reward_range=reward_range, args=SimpleNamespace(num_turns=turns, discount=discount)
    )


def test_the_return_range_follows_turns_and_discount() -> None:
    assert return_bounds(_trainer((0.0, 1.0))) == (0.0, 1.0)
    assert return_bounds(_trainer((0.0, 1.0), turns=2, discount=0.5)) == (0.0, 1.5)
    assert return_bounds(_trainer(None)) is None


def test_a_declared_range_clips_a_wide_interval() -> None:
    assert poster_task().reward_range == (0.0, 1.0)
    bounds = return_bounds(_trainer(poster_task().reward_range))
    interval = score_interval([0.1, 0.95], bounds=bounds)
    assert interval.low == 0.0 and interval.high == 1.0
    assert score_interval([0.1, 0.95]).low < 0  # unclipped, n=2 reaches below the range
