"""The 95% intervals of held-out scores: Wilson for success rates, t for mean rewards."""

import math

import pytest

from langmarl.core.intervals import (
    Z_95,
    ScoreInterval,
    interval_method,
    score_interval,
    t_quantile,
    wilson_interval,
)


def test_wilson_matches_known_values() -> None:
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    low, high = wilson_interval(0, 10)  # not degenerate at 0/n, unlike the normal interval
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and low == pytest.approx(0.8389, abs=1e-4)


def test_wilson_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_t_interval_of_mean_rewards() -> None:
    result = score_interval([0.5, 0.25, 0.75])
    assert result.method == "t" and result.n == 3 and result.mean == pytest.approx(0.5)
    half = 4.303 * 0.25 / math.sqrt(3)
    assert result.low == pytest.approx(0.5 - half) and result.high == pytest.approx(0.5 + half)


def test_binary_rewards_use_wilson() -> None:
    result = score_interval([1.0, 0.0, 1.0, 1.0])
    assert result.method == "wilson" and result.mean == 0.75 and result.n == 4
    assert (result.low, result.high) == wilson_interval(3, 4)
    assert interval_method([0.0, 1.0]) == "wilson" and interval_method([0.5]) == "t"
    assert score_interval([0.5, 1.0], method="wilson").mean == 0.5  # counts the 1s


def test_one_non_binary_value_has_no_interval() -> None:
    result = score_interval([0.4])
    assert result == ScoreInterval(mean=0.4, low=None, high=None, n=1, method="t")
    assert result.describe() == "0.400 [n/a] n=1 (t)"
    assert score_interval([1.0]).describe().endswith("n=1 (Wilson)")


def test_no_values_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        score_interval([])


def test_t_quantiles() -> None:
    assert t_quantile(1) == 12.706 and t_quantile(30) == 2.042
    assert t_quantile(45) == 2.021  # between rows: the wider one
    assert t_quantile(1000) == Z_95
    with pytest.raises(ValueError):
        t_quantile(0)


def test_a_t_interval_is_clipped_to_the_declared_range() -> None:
    wide = score_interval([0.2, 0.9])  # n=2: t with 1 degree of freedom is very wide
    assert wide.low is not None and wide.low < 0 and wide.high is not None and wide.high > 1
    clipped = score_interval([0.2, 0.9], bounds=(0.0, 1.0))
    assert (clipped.low, clipped.high, clipped.mean) == (0.0, 1.0, wide.mean)
    assert score_interval([0.5], bounds=(0.0, 1.0)).low is None  # nothing to clip
