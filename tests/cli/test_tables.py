"""The CLI's tables stay readable at 80 columns: no number is cut to `0.…`, no run id wrapped."""

from __future__ import annotations

import io
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from langmarl.cli.eval_commands import comparison_table
from langmarl.cli.parl_commands import CURVE_COLUMNS
from langmarl.cli.runs_commands import _runs_table
from langmarl.cli.train_commands import summary_table, usage_table
from langmarl.core.intervals import ScoreInterval
from langmarl.store.catalog import RunSummary
from langmarl.trainer.evaluation import CheckpointScore, HeldoutComparison

ITERATION = {
    "iteration": 12, "avg_reward": 0.4567, "min_reward": 0.0, "max_reward": 1.0,
    "num_episodes": 24, "llm_calls": 1234, "total_tokens": 1234567, "cost_usd": 0.01234,
    "accepted_updates": 1, "validation_score": 0.667,
    "policy_updates": {"researcher": "accepted: quoting the fact", "answerer": "rejected"},
    "usage_by_role": {"actor": {"calls": 10, "failures": 0, "input_tokens": 123456,
                                "output_tokens": 23456, "cost_usd": 0.1234}},
}  # fmt: skip


def render(table: Any) -> str:
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


def test_training_tables_keep_every_number_whole() -> None:
    text = render(summary_table([ITERATION]))
    for number in ("13", "0.457", "1,234,567", "0.667"):
        assert number in text, text
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    pool = ITERATION | {"policy_updates": {"agent-0": "demonstration", "agent-1": "merge"}}
    words = render(summary_table([pool])).split()
    assert "demonstration," in words and "policy" in words, words  # never "demonstratio / n"
    usage = render(usage_table([ITERATION]))
    assert "123,456" in usage and "23,456" in usage and "0.1234" in usage and "…" not in usage


def test_the_heldout_comparison_keeps_its_intervals_whole() -> None:
    interval = ScoreInterval(mean=0.4567, low=0.1234, high=0.7891, n=20, method="wilson")
    side = CheckpointScore(iteration=0, interval=interval)
    result = HeldoutComparison("a-long-run-name-2026", "test", side, replace(side, iteration=12))
    text = render(comparison_table(result))
    assert "[0.123, 0.789]" in text and "0.457" in text and "…" not in text, text


def test_the_parl_curve_fits() -> None:
    from langmarl.cli.common import compact_table

    table = compact_table(*CURVE_COLUMNS.values())
    table.add_row("12", "0.512", "0.500", "0.100", "3", "4", "9", "2.250")
    text = render(table)
    assert "0.512" in text and "2.250" in text and "…" not in text


def test_the_runs_list_keeps_long_ids_kinds_and_scores_on_one_line() -> None:
    root = Path("runs")
    long_ids = ("session_20261125_020851_f30e", "quickstart-20261125-014216")
    runs = [
        RunSummary(root / long_ids[0], long_ids[0], "p2p_session", "completed",
                   updated_at=time.time(), progress="2 iterations", score=-41.141),
        RunSummary(root / "group" / long_ids[1], long_ids[1], "magrpo", "running",
                   updated_at=time.time() - 3 * 86400, progress="16/16 steps", score=0.733),
    ]  # fmt: skip
    text = render(_runs_table(root, runs))
    lines = text.splitlines()
    assert lines[0].strip() == "runs/" and max(len(line) for line in lines) <= 80, text
    for whole in (long_ids[0], f"group/{long_ids[1]}", "p2p_session", "-41.141", "0.733"):
        assert any(whole in line for line in lines), (whole, text)
    assert "…" not in text


def test_a_wrapped_diff_line_keeps_its_marker_apart() -> None:
    """Issue 42, item 5: a long added line wrapped to column 0 and read as context."""
    from langmarl.cli.runs_commands import diff_lines

    added = "+" + " ".join(["answer"] * 30)
    text = render(diff_lines(f"--- a\n+++ b\n@@ -1 +1 @@\n-old line\n{added}\n same"))
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[:4] == ["  --- a", "  +++ b", "  @@ -1 +1 @@", "- old line"], lines
    wrapped = [line for line in lines if "answer" in line]
    assert len(wrapped) >= 3 and wrapped[0].startswith("+ answer")
    assert all(line.startswith("  answer") for line in wrapped[1:]), wrapped  # under its text
    assert max(len(line) for line in lines) <= 80
