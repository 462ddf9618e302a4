"""Process identity on Linux: a pid together with its start time, so a recycled pid is never
taken for the process that once had it; and a child's tie to the thread that started it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

PR_SET_PDEATHSIG = 1


def parent_death_signal(signum: int) -> Callable[[], None]:
    """What a child runs before exec (``preexec_fn``) to get ``signum`` when the thread that
    started it dies (Linux ``prctl(PR_SET_PDEATHSIG)``; a no-op elsewhere). ``prctl`` is
    looked up here, in the parent, so the child only calls it."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return lambda: None
    return lambda: prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (``[0]`` is the state,
    ``[1]`` the parent pid, ``[11:13]`` user and system clock ticks, ``[19]`` the start
    time); ``None`` when the process is gone or there is no ``/proc``. The name may hold
    spaces and parentheses, so the split is after its last ``)``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def process_start(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux ``/proc``), to tell a live run from a
    recycled pid; ``None`` where unavailable."""
    fields = stat_fields(pid)
    return None if fields is None else fields[19]


def process_alive(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` still runs (and is the one that started at ``started``).
    Never for ``pid`` <= 1: to ``kill``, 0 and negative numbers are process groups (-1 is
    every process the user may signal), and 1 is init."""
    if pid <= 1:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return started is None or process_start(pid) == started
