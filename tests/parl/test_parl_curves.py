"""Curve rows and their per-step summary."""

from __future__ import annotations

import pytest

from langmarl.parl.curves import curves_document, episode_row, summarize


def _meta(reward: float, critical: int, serial: int) -> dict[str, object]:
    return {
        "task_id": "t",
        "num_subagents": 2,
        "critical_steps": critical,
        "serial_steps": serial,
        "accuracy": 1.0,
        "success": True,
        "plan_status": "plan",
        "parl": {"total_reward": reward, "r_parallel": 0.25, "lambda1": 0.1},
    }


def test_rows_read_parl_terms_and_trace_counts() -> None:
    row = episode_row(3, _meta(1.2, 3, 5))
    assert row["step"] == 3 and row["total_reward"] == 1.2 and row["lambda1"] == 0.1
    assert row["critical_steps"] == 3.0 and row["success"] is True
    assert row["r_finish"] == 0.0  # absent terms are 0


def test_summary_means_per_step_and_speedup() -> None:
    rows = [episode_row(0, _meta(1.0, 3, 5)), episode_row(0, _meta(0.0, 3, 7)),
            episode_row(1, _meta(0.5, 4, 4))]  # fmt: skip
    curve = summarize(rows)
    assert [p["step"] for p in curve] == [0, 1]
    assert curve[0]["episodes"] == 2 and curve[0]["total_reward"] == pytest.approx(0.5)
    assert curve[0]["speedup"] == pytest.approx(6 / 3)
    assert curve[1]["speedup"] == pytest.approx(1.0)
    assert curves_document(rows)["episodes"] == rows


def test_first_last_means_compare_windows_and_refuse_overlap() -> None:
    from langmarl.parl.curves import first_last_means

    curve = [{"step": i, "total_reward": float(i), "num_subagents": 1.0} for i in range(6)]
    means = first_last_means(curve, 2, ["total_reward", "num_subagents"])
    assert means["total_reward"] == {"first": 0.5, "last": 4.5, "change": 4.0}
    assert means["num_subagents"]["change"] == 0.0
    with pytest.raises(ValueError, match="at least 8 curve points"):
        first_last_means(curve, 4, ["total_reward"])
