"""SIGTERM ends a run `cancelled` (Ctrl-C: `stopped`), in a real process: the one handler
that `langmarl` installs, through RunDir.tracking, RunDir.update and LocalStore."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from langmarl.core.signals import CANCELLED_ERROR
from langmarl.store.run import RunDir
from langmarl.testing.processes import ctrl_c_reaches_python

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from langmarl.store.local import LocalStore
    from langmarl.core.signals import cancel_on_sigterm
    from langmarl.store.run import RunDir

    cancel_on_sigterm()
    run = RunDir(sys.argv[1])
    run.start("magrpo")
    store = LocalStore(sys.argv[2])
    try:
        with run.tracking():
            os.kill(os.getpid(), getattr(signal, sys.argv[3]))
            time.sleep(30)
    finally:
        if sys.argv[3] == "SIGTERM":
            os.kill(os.getpid(), signal.SIGTERM)  # a second one must not break the cleanup
            time.sleep(0.1)
        store.set_status("lang", "stopped", "interrupted")
        RunDir(sys.argv[4]).update(status="stopped", error="interrupted")
    """
)


@pytest.mark.parametrize(
    ("signal_name", "status", "error"),
    [("SIGTERM", "cancelled", CANCELLED_ERROR), ("SIGINT", "stopped", "interrupted")],
)
def test_sigterm_cancels_and_ctrl_c_stops(tmp_path: Path, signal_name, status, error) -> None:
    run, store, other = tmp_path / "run", tmp_path / "store", tmp_path / "other"
    (store / "lang").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(run), str(store), signal_name, str(other)],
        capture_output=True, text=True, timeout=60, preexec_fn=ctrl_c_reaches_python,
    )  # fmt: skip
    cancelled = signal_name == "SIGTERM"  # the langmarl command turns it into exit code 143
    assert done.returncode == (1 if cancelled else -signal.SIGINT), done.stderr
    assert ("RunCancelled" in done.stderr) == cancelled
    record = RunDir(run).record()
    assert (record.status, record.error) == (status, error)
    assert RunDir(run).events()[-1]["status"] == status
    assert RunDir(store / "lang").read()["status"] == status  # type: ignore[index]
    assert RunDir(other).read()["status"] == status  # type: ignore[index]
