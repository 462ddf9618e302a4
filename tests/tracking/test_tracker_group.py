"""Flattening of metrics and params, the step of a record, the group of trackers."""

from __future__ import annotations

from typing import Any

import pytest

from langmarl.core.errors import ConfigError
from langmarl.tracking import Tracker, TrackerGroup, flatten_metrics
from langmarl.tracking.base import flatten_params, record_step


def test_only_numbers_are_metrics_and_nested_dicts_flatten_with_a_slash() -> None:
    record = {
        "step": 3,
        "loss": 0.5,
        "tokens": 12,
        "reward": {"mean": 1.0, "per_agent": {"solver": 2}},
        "done": True,
        "phase": "train",
        "rewards": [1, 2],
        "kl": None,
        "nan": float("nan"),
    }
    metrics = flatten_metrics(record)
    assert set(metrics) == {"loss", "tokens", "reward/mean", "reward/per_agent/solver", "nan"}
    assert metrics["tokens"] == 12.0 and isinstance(metrics["tokens"], float)
    assert metrics["reward/per_agent/solver"] == 2.0


def test_params_keep_every_leaf() -> None:
    params = flatten_params({"lr": 0.1, "llm": {"name": "local", "seed": None}, "ids": ["a"]})
    assert params == {"lr": 0.1, "llm/name": "local", "llm/seed": None, "ids": '["a"]'}


@pytest.mark.parametrize("record", [{}, {"step": -1}, {"step": "3"}, {"step": True}, {"step": 1.5}])
def test_a_record_needs_an_integer_step(record: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="needs 'step'"):
        record_step(record)
    assert record_step({"step": 4.0}) == 4


def test_the_group_fans_out_and_skips_records_without_numbers(recorder_cls: type) -> None:
    a, b = recorder_cls(), recorder_cls()
    assert isinstance(a, Tracker)
    with TrackerGroup([a, b]) as group:
        group.log_params({"lr": 0.1})
        group.log_record({"step": 0, "loss": 1.0})
        group.log_record({"step": 1, "note": "no numbers"})
    assert a.logged == b.logged == [({"loss": 1.0}, 0)]
    assert a.params == [{"lr": 0.1}] and a.closed == b.closed == 1


def test_closing_the_group_closes_every_tracker_even_if_one_fails(recorder_cls: type) -> None:
    class Broken(recorder_cls):  # type: ignore[misc,valid-type]
        def close(self) -> None:
            raise OSError("disk full")

    last = recorder_cls()
    with pytest.raises(OSError, match="disk full"):
        TrackerGroup([Broken(), last]).close()
    assert last.closed == 1
