"""`report_to` while runs train: the language trainer feeds its metrics stream to real
TensorBoard event files (read back), each step once, also across a resume (MAGRPO:
tests/magrpo/test_magrpo_reporting.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from langmarl.tracking.export import MetricsFollower
from langmarl.tracking.factory import make_trackers
from langmarl.trainer import MonteCarloTrainer

sys.path.insert(0, str(Path(__file__).parents[1] / "trainer"))
from trainer_fakes import make_parts


def test_a_language_run_reports_each_iteration_once_across_a_resume(
    tmp_path: Path, tensorboard_scalars: Callable[[Path, str], list[tuple[int, float]]]
) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=2, report_to="tensorboard")
    MonteCarloTrainer(cfg, env, critic, opt).train()
    run = tmp_path / "runs" / "test"
    first = tensorboard_scalars(run, "avg_reward")
    assert [step for step, _ in first] == [1, 2]
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=3, report_to=["tensorboard"])
    metrics = MonteCarloTrainer(cfg, env, critic, opt).train()
    after = tensorboard_scalars(run, "avg_reward")
    assert [step for step, _ in after] == [1, 2, 3]  # 1 and 2 not sent again
    assert [value for _, value in after] == pytest.approx([m["avg_reward"] for m in metrics])


def test_the_follower_skips_what_the_file_held_at_start(
    tmp_path: Path, tensorboard_scalars: Callable[[Path, str], list[tuple[int, float]]]
) -> None:
    metrics = tmp_path / "metrics.jsonl"
    metrics.write_text('{"step": 1, "r": 0.1}\n{"step": 2, "r": 0.2}\n')
    follower = MetricsFollower(metrics, make_trackers("tensorboard", tmp_path, "t"))
    with metrics.open("a") as handle:
        handle.write('{"step": 3, "r": 0.3}\n{"step": 4, "r": 0.4}\n{"step": 5, "r"')
    assert follower.sync() == 2  # 3 and 4; the torn last line waits
    assert follower.sync() == 0
    follower.close()
    assert tensorboard_scalars(tmp_path, "r") == [(3, pytest.approx(0.3)), (4, pytest.approx(0.4))]


def test_an_unknown_tracker_fails_before_the_run_starts(tmp_path: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"report_to[\s\S]*Did you mean 'tensorboard'"):
        make_parts(tmp_path, report_to="tensorbord")
    assert not (tmp_path / "runs").exists()
