"""TrajectoryStore and RunLogger."""

from pathlib import Path

from langmarl.core.records import Trajectory
from langmarl.store import LocalStore, RunLogger, TrajectoryStore


def test_save_load_count(tmp_path: Path) -> None:
    trajs = TrajectoryStore(LocalStore(tmp_path), "run")
    for episode in (2, 0, 1):
        trajs.save(3, episode, Trajectory(reward=episode, steps=[{"agent_id": "a"}]))
    assert trajs.count(3) == 3
    assert [t.reward for t in trajs.load(3)] == [0.0, 1.0, 2.0]
    assert len(trajs.load(3, limit=2)) == 2
    assert trajs.load_one(3, 1) is not None and trajs.load_one(3, 9) is None
    assert trajs.count(4) == 0


def test_run_logger_writes_text_and_events(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    logger = RunLogger(store, "run")
    logger.iteration_start(0, {"a": "p"})
    logger.episode_saved(0, 1, 0.5)
    logger.error("critic failed")
    logger.iteration_end(0, {"avg_reward": 0.5, "total_tokens": 10, "cost_usd": 0.0})
    events = [e["event"] for e in store.read_events("run", "logs/events.jsonl")]
    assert events == ["iteration_start", "episode", "error", "iteration_end"]
    log = (tmp_path / "run" / "logs" / "run.log").read_text()
    assert "critic failed" in log and "avg reward 0.500" in log
    assert "episode 1" not in log  # debug is below the default INFO level
