"""Running one job's command and stopping it gracefully: the part both backends share.

A cancel sends SIGTERM to the command (which ends its run ``cancelled``, files intact: see
:func:`langmarl.core.signals.cancel_on_sigterm`) and, if it is still alive ``grace_s`` seconds
later, SIGKILL to its whole process group (PPO executors and other children included). A
command never outlives what watches it: it gets the same SIGTERM when its watcher dies.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from langmarl.jobs.environment import THREAD_VARIABLES, job_environment

__all__ = ["GRACE_S", "THREAD_VARIABLES", "job_environment", "run_command"]

GRACE_S = 30.0
"""Seconds a cancelled command has to save its run before it is killed."""

PR_SET_PDEATHSIG = 1


def _parent_death_signal() -> Callable[[], None]:
    """What the child calls so that it gets SIGTERM when the thread that started it dies
    (Linux ``prctl(PR_SET_PDEATHSIG)``; a no-op elsewhere). SIGKILL of a local job's
    supervisor or of a Ray worker then ends the command as a cancel does (its run saved,
    ``cancelled``) instead of leaving it to run on unwatched. The watching thread waits for
    the command, so it lives exactly as long as the command should."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return lambda: None
    return lambda: prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def run_command(
    argv: Sequence[str],
    *,
    env: dict[str, str],
    log: IO[bytes],
    stop_requested: Callable[[], bool],
    grace_s: float = GRACE_S,
    cores: Sequence[int] = (),
    cwd: str | Path | None = None,
    started: Callable[[int], object] | None = None,
) -> int:
    """Run ``argv`` to its end and return its exit code (negative: killed by that signal).

    Args:
        argv: The command.
        env: Its environment.
        log: Where its stdout and stderr go.
        stop_requested: Polled; once true the command gets SIGTERM, then SIGKILL after
            ``grace_s`` seconds.
        cores: Pin the command to these cores (``sched_setaffinity``); empty: not pinned.
        cwd: Its working directory.
        started: Called with the command's pid once it runs.
    """
    pinned = set(cores)
    parent, tie = os.getpid(), _parent_death_signal()

    def prepare() -> None:  # runs in the child, before exec
        if pinned:
            os.sched_setaffinity(0, pinned)
        tie()
        if os.getppid() != parent:  # the watcher died before the tie was made
            os.kill(os.getpid(), signal.SIGTERM)

    process = subprocess.Popen(
        list(argv), env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT, preexec_fn=prepare, process_group=0,
    )  # fmt: skip
    if started is not None:
        started(process.pid)
    deadline: float | None = None
    while True:
        try:
            return process.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        if deadline is None and stop_requested():
            process.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + grace_s
        elif deadline is not None and time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
