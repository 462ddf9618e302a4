"""Helpers for tests that kill real training processes: wait for a state with a hang guard,
SIGKILL a process once it reached one, and send a process SIGTERMs without pause."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
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


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped, counts as gone)."""
    fields = stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def all_gone(pids: Sequence[int], within_s: float = 20.0) -> bool:
    """Whether every one of ``pids`` ended within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.2)
    return False


def command_line(pid: int) -> str:
    """``pid``'s command line, its arguments joined by spaces ("" once it has ended)."""
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def descendants(roots: set[int]) -> set[int]:
    """``roots`` and every process below them (read from /proc)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = stat_fields(int(stat.parent.name))
        if fields is not None:  # None: the process ended meanwhile
            parents[int(stat.parent.name)] = int(fields[1])
    found, grew = set(roots), True
    while grew:
        below = {pid for pid, parent in parents.items() if parent in found} - found
        found, grew = found | below, bool(below)
    return found


SIGTERM_STORM = """
import asyncio, signal
from langmarl.core import signals
from langmarl.core.aio import run_sync
signals.stop_on_signals()

async def work():
    while True:
        await asyncio.sleep(0)

for n in range({rounds}):
    try:
        if n == 0:
            print("ready", flush=True)  # inside: the storm may start before print returns
        signals._terminated.clear()  # a fresh first SIGTERM each round
        run_sync(work())
    except signals.RunCancelled:
        pass
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the storm goes on while this one exits
print("every round cancelled", flush=True)
"""
"""A process that cancels ``{rounds}`` runs of :func:`langmarl.core.aio.run_sync` one after the
other, each by the next SIGTERM (``tests/core/test_signals.py``, ``benchmarks/signal_storm.py``)."""


def sigterm_storm(rounds: int, timeout_s: float) -> tuple[bool, int | None, str, str]:
    """Run :data:`SIGTERM_STORM` and send it SIGTERM without pause until it exits (or
    ``timeout_s`` passes, a safety net; then it is killed).

    Returns:
        Whether it said it was ready, its exit code, its stdout and its stderr.
    """
    script = [sys.executable, "-c", SIGTERM_STORM.format(rounds=rounds)]
    process = subprocess.Popen(script, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    try:
        ready = process.stdout.readline() == "ready\n"
        while ready and process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
    finally:
        process.kill()
        out, err = process.communicate()
    return ready, process.returncode, out, err
