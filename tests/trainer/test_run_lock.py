"""One process at a time per run: a second `train` of a live run gets a clear error naming
the holder, and the lock does not outlive a SIGKILL."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.core.errors import RunLockedError
from langmarl.store import RunLock
from langmarl.testing.processes import wait_until

TARGET = Path(__file__).with_name("kill_target.py")


def test_a_second_process_gets_a_clear_error_and_a_killed_holder_frees_the_run(
    tmp_path: Path,
) -> None:
    command = [sys.executable, str(TARGET), str(tmp_path), "30", "0.1"]
    run = tmp_path / "killed"
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        checkpoint = run / "policies/iter_0000/manifest.json"
        wait_until(checkpoint.exists, first, 60, "the first checkpoint")
        second = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert second.returncode != 0
        assert f"RunLockedError: run {run} is in use by process {first.pid}" in second.stderr
        attempts = json.loads((run / "run.json").read_text())["attempts"]
        assert attempts == 1  # the refused process changed nothing
        assert RunLock(run).holder() == first.pid
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert RunLock(run).holder() is None
    third = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(
            lambda: (
                (run / "run.json").exists()
                and json.loads((run / "run.json").read_text()).get("pid") == third.pid
            ),
            third,
            60,
            "the resumed attempt owning the run",
        )
        assert json.loads((run / "run.json").read_text())["attempts"] == 2
    finally:
        third.send_signal(signal.SIGKILL)
        third.wait()


def test_the_lock_in_one_process(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "run")
    assert lock.holder() is None
    with lock:
        assert lock.held and lock.acquire() is lock  # taking it again is a no-op
        with pytest.raises(RunLockedError, match=f"in use by process {os.getpid()}"):
            RunLock(tmp_path / "run").acquire()  # another descriptor: refused like a process
    assert not lock.held and lock.holder() is None
    with RunLock(tmp_path / "run"):
        pass
