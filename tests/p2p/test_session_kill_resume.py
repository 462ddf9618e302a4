"""A real session process (scripted LLM, real sandboxed validation, real PPO in executor
processes) SIGKILLed after its first judged iteration, then resumed to the end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.p2p import SessionRecord
from langmarl.store.run import RunDir
from langmarl.testing.processes import kill_after_metric_lines

TARGET = Path(__file__).with_name("p2p_kill_target.py")


@pytest.mark.slow
def test_sigkill_after_iteration_1_then_resume_runs_every_iteration_once(tmp_path: Path):
    session, iterations = tmp_path / "session", 3
    command = [sys.executable, str(TARGET), str(session), str(iterations)]
    kill_after_metric_lines(command, session, 1)
    record = SessionRecord(session).run.record()
    assert record.status == "failed" and "langmarl p2p resume" in (record.error or "")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    record = RunDir(session).record()
    assert (record.status, record.outcome, record.attempts) == ("completed", "max_iterations", 2)  # type: ignore[attr-defined]
    assert [m["step"] for m in RunDir(session).metrics()] == [1, 2, 3]
    history = SessionRecord(session).read_history()
    assert [s["iteration"] for s in history["iterations"]] == [1, 2, 3]
    assert [s["reward_origin"] for s in history["iterations"]] == ["author", "revision", "revision"]
    iterations_on_disk = SessionRecord(session).iteration_records()
    assert [it.iteration_id for it in iterations_on_disk] == ["iter_1", "iter_2", "iter_3"]
    for it in iterations_on_disk:
        assert it.validate() == [] and it.read_judgment() is not None
        assert it.read_config()["learning_rate"] == (3e-4 if it.iteration_id == "iter_1" else 1e-3)
