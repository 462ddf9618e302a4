"""SIGKILL the training process at random moments, resume each time: the run completes,
every finished iteration is intact and no file is corrupt."""

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langmarl.store import LocalStore, PolicyCheckpoint

TARGET = Path(__file__).with_name("kill_target.py")
ITERATIONS = 28
KILLS = 8
LATENCY_S = 0.1
"""Per LLM call: 28 iterations of 6 dependent rounds take ~17 s, about twice the training
time the 8 seeded kills leave (~12 s of sleeps minus each restart's start-up), so the run
cannot finish before the kills are done on a fast machine."""
AGENTS = ["researcher", "answerer"]


def _check_intact(run: Path) -> int:
    """Every JSON file parses, every JSONL line but a torn last one parses, and every
    complete checkpoint has all its policy files. Returns the number of checkpoints."""
    for path in run.rglob("*.json"):
        json.loads(path.read_text())  # raises on a torn file
    for path in run.rglob("*.jsonl"):
        lines = path.read_text().splitlines()
        for line in lines[:-1]:
            json.loads(line)
    checkpoint = PolicyCheckpoint(LocalStore(run.parent), run.name, 2, agent_ids=AGENTS)
    for iteration in checkpoint.iterations():
        policies = checkpoint.get_policies(iteration)
        assert list(policies) == AGENTS and all(policies.values())
    stats = [m["iteration"] for m in checkpoint.all_stats()]
    assert stats == list(range(len(stats)))  # no gap, no repeat
    return len(checkpoint.iterations())


@pytest.mark.slow
def test_sigkill_at_random_moments_then_resume(tmp_path: Path) -> None:
    rng = random.Random(1234)
    run = tmp_path / "killed"
    command = [sys.executable, str(TARGET), str(tmp_path), str(ITERATIONS), str(LATENCY_S)]
    kills = mid_iteration = 0
    while kills < KILLS:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.5, 2.5))
        if proc.poll() is not None:
            break  # finished before we could kill it
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        if (run / "run.json").exists():  # not yet written if killed during start-up
            done = _check_intact(run)
            partial = run / "trajectories" / f"iter_{done - 1:04d}"
            mid_iteration += partial.is_dir() and any(partial.iterdir())
            info = LocalStore(tmp_path).run_info("killed")
            assert info["status"] == "failed" and "resume" in info["error"]
    final = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr[-2000:]
    assert kills >= KILLS - 1 and mid_iteration >= 3  # kills landed inside iterations
    assert _check_intact(run) == ITERATIONS + 1
    info = LocalStore(tmp_path).run_info("killed")
    assert info["status"] == "completed" and info["completed_iterations"] == ITERATIONS
    metrics = LocalStore(tmp_path).load_metrics("killed")
    assert [m["iteration"] for m in metrics] == list(range(ITERATIONS))
    assert sum(m["reused_episodes"] for m in metrics) > 0  # interrupted work was resumed
    assert info["attempts"] <= kills + 1
    assert not list(run.rglob(".*.tmp"))
