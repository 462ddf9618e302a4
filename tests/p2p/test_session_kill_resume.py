"""A real session process (scripted LLM, real sandboxed validation, real PPO in executor
processes) SIGKILLed after its first judged iteration, then resumed to the end."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from langmarl.p2p import SessionRecord
from langmarl.p2p.session.records import IterationRecord
from langmarl.store.run import RunDir
from langmarl.testing.processes import kill_after_metric_lines, wait_until

TARGET = Path(__file__).with_name("p2p_kill_target.py")


@pytest.mark.slow
def test_sigkill_after_iteration_1_then_resume_runs_every_iteration_once(tmp_path: Path):
    session, iterations = tmp_path / "session", 2  # the resumed process trains the last
    command = [sys.executable, str(TARGET), str(session), str(iterations)]
    kill_after_metric_lines(command, session, 1)
    record = SessionRecord(session).run.record()
    assert record.status == "failed" and "langmarl p2p resume" in (record.error or "")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    record = RunDir(session).record()
    assert (record.status, record.outcome, record.attempts) == ("completed", "max_iterations", 2)  # type: ignore[attr-defined]
    assert [m["step"] for m in RunDir(session).metrics()] == [1, 2]
    history = SessionRecord(session).read_history()
    assert [s["iteration"] for s in history["iterations"]] == [1, 2]
    assert [s["reward_origin"] for s in history["iterations"]] == ["author", "revision"]
    iterations_on_disk = SessionRecord(session).iteration_records()
    assert [it.iteration_id for it in iterations_on_disk] == ["iter_1", "iter_2"]
    for it in iterations_on_disk:
        assert it.validate() == [] and it.read_judgment() is not None
        assert it.read_config()["learning_rate"] == (3e-4 if it.iteration_id == "iter_1" else 1e-3)


@pytest.mark.slow
def test_sigkill_mid_search_then_resume_keeps_the_judged_candidates(tmp_path: Path):
    """A random search of 2 candidates SIGKILLed once its first is judged (the second is
    training: its process dies with the session); the resumed session trains the second
    and loses none."""
    session = tmp_path / "session"
    command = [sys.executable, str(TARGET), str(session), "1", "2"]
    history = session / "loop_history.json"

    def first_judged() -> bool:
        with contextlib.suppress(OSError, ValueError, IndexError, KeyError):
            listed = json.loads(history.read_text())["iterations"][0]["candidates"]
            return listed[0]["judged"]
        return False

    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def training_homes() -> list[Path]:  # langmarl.core.scratch names them after the session
        return list(Path(tempfile.gettempdir()).glob(f"langmarl-train-*-{process.pid}.*"))

    try:  # the second candidate's training starts a moment after the first is judged
        wait_until(lambda: first_judged() and bool(training_homes()), process,
                   what="the first candidate judged and the second training")  # fmt: skip
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    c_1 = session / "iter_1" / "candidates" / "c_1"
    kept = (c_1 / "outcome.json").read_text()
    leaked = training_homes()  # the killed training's home, which no one removed
    assert leaked, "the second candidate was not training when the session was killed"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (c_1 / "outcome.json").read_text() == kept  # judged before the kill: not retrained
    assert not [path for path in leaked if path.exists()]  # swept when c_2 trained again
    (step,) = SessionRecord(session).read_history()["iterations"]
    assert [c["judged"] and c["error"] is None for c in step["candidates"]] == [True] * 2
    assert [c["origin"] for c in step["candidates"]] == ["random"] * 2
    assert step["winner"] in ("c_1", "c_2") and step["judged"]
    assert [m["step"] for m in RunDir(session).metrics()] == [1]
    for name in ("c_1", "c_2"):
        assert IterationRecord(session / "iter_1" / "candidates" / name).validate() == []
    assert SessionRecord(session).iteration(1).validate() == []  # the winner's files
