"""A p2p session's phase, read from the files the loop writes as it goes."""

from __future__ import annotations

import json
from pathlib import Path

from langmarl.cli.p2p_progress import Phase, session_phase


def test_each_file_the_loop_writes_moves_the_phase_on(tmp_path: Path) -> None:
    assert session_phase(tmp_path) == Phase(0, "writing the reward (LLM)")
    it = tmp_path / "iter_1"
    it.mkdir()
    (it / "config.json").write_text(json.dumps({"total_timesteps": 2048}))
    assert session_phase(tmp_path).label == "validating the reward, starting PPO"
    scalars = it / "metrics" / "scalars.jsonl"
    scalars.parent.mkdir()
    rows = [{"type": "train", "step": 512}, {"type": "eval"}, {"type": "train", "step": 1024}]
    scalars.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"step": 15')  # mid-write
    assert session_phase(tmp_path) == Phase(1, "training PPO", 1024, 2048, 0)
    (it / "summary.json").write_text("{}")
    assert session_phase(tmp_path).label == "judging"
    (it / "outcome.json").write_text("{}")
    assert session_phase(tmp_path) == Phase(1, "revising the reward (LLM)", judged=1)
    assert session_phase(tmp_path, max_iterations=1).label == "analysing the session"
    (it / "judgment.json").write_text('{"passed": true}')
    assert session_phase(tmp_path, max_iterations=3).label == "analysing the session"
    (tmp_path / "iter_2").mkdir()
    assert session_phase(tmp_path) == Phase(2, "validating the reward, starting PPO", judged=1)


def test_seed_runs_of_one_iteration_are_averaged(tmp_path: Path) -> None:
    it = tmp_path / "iter_3"
    for run, step in (("a", 100), ("b", 300)):
        path = it / "runs" / run / "metrics" / "scalars.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"step": step}) + "\n")
    phase = session_phase(tmp_path)
    assert (phase.iteration, phase.done, phase.total) == (3, 200, None)


def test_a_baseline_trains_before_iteration_1_and_a_check_says_who_passed(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline"
    baseline.mkdir()
    assert session_phase(tmp_path) == Phase(0, "training the env's own reward (baseline)")
    (baseline / "config.json").write_text(json.dumps({"total_timesteps": 4096}))
    (baseline / "metrics").mkdir()
    (baseline / "metrics" / "scalars.jsonl").write_text(json.dumps({"step": 1024}) + "\n")
    assert session_phase(tmp_path) == Phase(
        0, "training the env's own reward (baseline)", 1024, 4096
    )
    it = tmp_path / "iter_1"
    it.mkdir()
    assert session_phase(tmp_path).label == "validating the reward, starting PPO"
    (it / "judgment.json").write_text('{"passed": false}')  # the judges' verdict
    (it / "outcome.json").write_text('{"check": {"passed": true}}')  # the check decides
    assert session_phase(tmp_path, max_iterations=3).label == "analysing the session"
    (it / "outcome.json").write_text('{"check": {"passed": false}}')
    (it / "judgment.json").write_text('{"passed": true}')
    assert session_phase(tmp_path, max_iterations=3).label == "revising the reward (LLM)"


def test_a_search_iteration_trains_its_candidates_under_candidates(tmp_path: Path) -> None:
    """Before the winner's files are copied into iter_N, the candidates' own files give the
    phase: their config's budget and their mean step."""
    for name, step in (("c_1", 1024), ("c_2", 512)):
        candidate = tmp_path / "iter_1" / "candidates" / name
        (candidate / "metrics").mkdir(parents=True)
        (candidate / "config.json").write_text(json.dumps({"total_timesteps": 2048}))
        (candidate / "metrics" / "scalars.jsonl").write_text(json.dumps({"step": step}) + "\n")
    assert session_phase(tmp_path) == Phase(1, "training 2 candidates", 768, 2048, 0)
