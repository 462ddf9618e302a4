"""Helpers for tests that kill real training processes: wait for a state with a hang guard,
and SIGKILL a process once it reached one."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from langmarl.core.processes import stat_fields


def ctrl_c_reaches_python() -> None:
    """``preexec_fn`` for a child the test will send SIGINT: restore SIGINT's default, which
    a shell leaves ignored for background commands (``cmd &``) and children inherit; Python
    only turns SIGINT into KeyboardInterrupt when it starts with the default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until(
    reached: Callable[[], bool],
    process: subprocess.Popen[bytes] | None = None,
    timeout_s: float = 180.0,
    what: str = "the awaited state",
) -> None:
    """Poll ``reached`` until it is true.

    The timeout guards against a hang; it is not a speed check.

    Raises:
        AssertionError: if ``process`` ended first (its stderr tail is in the message) or
            ``timeout_s`` passed.
    """
    deadline = time.monotonic() + timeout_s
    while not reached():
        if process is not None and process.poll() is not None:
            tail = process.stderr.read().decode()[-2000:] if process.stderr else ""
            raise AssertionError(f"the process ended before {what}: {tail}")
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} not reached within {timeout_s:.0f} s")
        time.sleep(0.05)


def metric_lines(run_dir: Path) -> int:
    """Lines of the run's ``metrics.jsonl`` (0 before it exists)."""
    path = run_dir / "metrics.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def kill_after_metric_lines(command: Sequence[str], run_dir: Path, lines: int) -> None:
    """Start ``command``, SIGKILL it once ``run_dir`` holds ``lines`` metrics lines, and reap
    it (an :class:`AssertionError` if it ends or stalls first)."""
    process = subprocess.Popen(list(command), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: metric_lines(run_dir) >= lines, process, what=f"{lines} metrics lines")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()


def rss_mb(pid: int) -> float:
    """Process ``pid``'s resident memory in MB (Linux ``/proc``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(kib) / 1024


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used (Linux ``/proc``)."""
    fields = stat_fields(pid)
    if fields is None:
        raise ProcessLookupError(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
