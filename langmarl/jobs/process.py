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

from langmarl.core.processes import parent_death_signal

GRACE_S = 30.0
"""Seconds a cancelled command has to save its run before it is killed."""


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
    # SIGTERM when the watching thread dies: SIGKILL of a local job's supervisor or of a Ray
    # worker ends the command as a cancel does (its run saved, ``cancelled``)
    parent, tie = os.getpid(), parent_death_signal(signal.SIGTERM)

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
