"""The pure helpers behind every plot: columns, running means, lenient number reading."""

from __future__ import annotations

import math

import pytest

from langmarl.plots.series import (
    Series,
    column,
    number,
    running_mean,
    smoothed,
    smoothing_window,
    suffix_columns,
)


def test_running_mean_is_trailing_and_shorter_at_the_start() -> None:
    assert running_mean([1.0, 3.0, 5.0, 7.0], 2) == [1.0, 2.0, 4.0, 6.0]
    assert running_mean([1.0, 3.0, 5.0], 10) == [1.0, 2.0, 3.0]
    assert running_mean([2.0, 4.0], 1) == [2.0, 4.0]
    assert running_mean([], 3) == []


@pytest.mark.parametrize(("n", "window"), [(0, 1), (3, 1), (4, 2), (40, 4), (1000, 25)])
def test_smoothing_window_grows_with_the_points(n: int, window: int) -> None:
    assert smoothing_window(n) == window


def test_smoothed_draws_the_raw_series_faint_under_its_mean() -> None:
    raw = Series("reward", [1, 2, 3, 4], [0.0, 1.0, 0.0, 1.0], group="g")
    faint, mean = smoothed(raw, "iterations")
    assert faint.style == "faint" and faint.y == raw.y and faint.group == "g"
    assert mean.label == "running mean (2 iterations)" and mean.y == [0.0, 0.5, 0.5, 0.5]
    assert mean.style == "line" and mean.group == "g"
    assert {s.group for s in smoothed(Series("reward", [1, 2, 3, 4], [0.0] * 4))} == {"reward"}
    assert smoothed(Series("r", [1, 2], [0.0, 1.0])) == [Series("r", [1, 2], [0.0, 1.0])]


def test_number_keeps_finite_numbers_only() -> None:
    assert number(3) == 3.0 and number(True) == 1.0 and number(0.5) == 0.5
    assert number(None) is None and number("0.5") is None
    assert number(math.nan) is None and number(math.inf) is None


def test_column_skips_records_missing_either_coordinate() -> None:
    records = [
        {"step": 1, "kl": 0.1},
        {"step": 2},
        {"kl": 0.3},
        {"step": 4, "kl": None},
        {"step": 5, "kl": 0.5},
    ]
    series = column(records, "kl", "step", "KL", "dashed")
    assert (series.label, series.x, series.y, series.style) == ("KL", [1, 5], [0.1, 0.5], "dashed")


def test_suffix_columns_one_series_per_prefix_in_order() -> None:
    records = [{"step": 1, "agent-1/kl": 0.2, "agent-0/kl": 0.1, "agent-0/loss": 5.0}]
    series = suffix_columns(records, "kl", "step")
    assert [(s.label, s.y) for s in series] == [("agent-0", [0.1]), ("agent-1", [0.2])]
    assert suffix_columns(records, "value_loss", "step") == []
