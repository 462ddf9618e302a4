"""How many torch threads to use: the cores that are free now, not the cores the machine has.

torch's default is one intra-op thread per core. On a shared machine that collapses: an
OpenMP team waits for its slowest thread at every barrier, so two threads on two cores that
other processes also want run many times slower than one (measured here: 147 s against
55 s for one language iteration under load 4–6). This module measures what the rest of the
machine uses and gives this process the cores left over.

What the rest of the machine uses is measured, not guessed from the load average (which
counts this process too and lags by a minute): the busy time of the cores this process may
run on (``/proc/stat``, restricted to its CPU affinity), minus this process's own CPU time,
over a window. :class:`ThreadGovernor` re-measures between units of work (a batch, a training
step) and moves the calling thread's torch threads with the machine. An explicit count —
``$LANGMARL_TORCH_THREADS`` or a config's ``num_threads`` — always wins and is never changed.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from langmarl.core.environment import THREADS_ENV_VAR, env_positive_int

log = logging.getLogger(__name__)

PROBE_SECONDS = 0.2
"""How long the first measurement watches the machine."""

HEADROOM = 0.25
"""A core counts as free when at least ``1 - HEADROOM`` of it is idle: a thread sharing a
core makes the whole team wait at every barrier, so a nearly busy core is not worth it."""


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity, capped by a cgroup CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    return max(1, min(cores, math.ceil(quota))) if quota else max(1, cores)


def _cgroup_quota() -> float | None:
    """Cores allowed by cgroup v2's ``cpu.max`` (``"max 100000"`` means no quota)."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        return None


def _allowed_cpus() -> set[int] | None:
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:
        return None


@dataclass(frozen=True)
class _Sample:
    at: float  # time.monotonic()
    busy: float | None  # seconds of busy CPU on the allowed cores since boot (None: unknown)
    own: float  # seconds of CPU this process has used


def _busy_seconds(cpus: set[int] | None) -> float | None:
    """Busy time (everything but idle and iowait) of ``cpus`` from ``/proc/stat``."""
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    busy = 0
    for line in lines:
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu":
            continue
        if cpus is not None and int(name[3:]) not in cpus:
            continue
        values = [int(v) for v in fields[:8]]
        busy += sum(values) - values[3] - values[4]  # minus idle, iowait
    return busy / tick


class CoreMeter:
    """Cores the rest of the machine used between two readings."""

    def __init__(self) -> None:
        self._cpus = _allowed_cpus()
        self._last = self._sample()

    def _sample(self) -> _Sample:
        return _Sample(time.monotonic(), _busy_seconds(self._cpus), time.process_time())

    def others(self) -> float:
        """Cores used by other processes since the last call (or since creation).

        Falls back on the one-minute load average where ``/proc/stat`` is missing.
        """
        now = self._sample()
        last, self._last = self._last, now
        elapsed = now.at - last.at
        if now.busy is None or last.busy is None or elapsed <= 0:
            return _load_average()
        return max(0.0, (now.busy - last.busy) - (now.own - last.own)) / elapsed


def _load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def threads_for(others: float, cores: int, sharers: int = 1) -> int:
    """Threads for one of ``sharers`` workers when other processes use ``others`` cores."""
    free = max(0.0, cores - others)
    return max(1, int(free + HEADROOM) // max(1, sharers))


def free_threads(probe_seconds: float = PROBE_SECONDS) -> int:
    """Threads that fit the cores free now: watches the machine for ``probe_seconds``."""
    meter = CoreMeter()
    time.sleep(probe_seconds)
    return threads_for(meter.others(), usable_cores())


def explicit_threads(configured: int | None = None) -> int | None:
    """``configured`` if given, else ``$LANGMARL_TORCH_THREADS``, else None (choose)."""
    return configured or env_positive_int(THREADS_ENV_VAR)


_BUSY = 0
_BUSY_LOCK = threading.Lock()


class ThreadGovernor:
    """Keeps the calling thread's torch threads at its share of the free cores.

    Create it in the thread that runs torch; call :meth:`adjust` between units of work. With
    an explicit count, :meth:`adjust` sets that count once and never moves it. Governors
    working at the same time in one process split the free cores between them (two agents
    on two engines each get half).

    Args:
        explicit: A fixed thread count (see :func:`explicit_threads`); None measures.
        interval: Least seconds between re-measurements.
    """

    def __init__(self, explicit: int | None = None, interval: float = 5.0) -> None:
        self.explicit = explicit
        self.interval = interval
        self.threads = explicit or free_threads()
        self._meter = CoreMeter()
        self._checked = time.monotonic()
        self._applied = 0

    def adjust(self) -> int:
        """Re-measure (at most every ``interval`` s), set torch's threads, return the count."""
        now = time.monotonic()
        if self.explicit is None and now - self._checked >= self.interval:
            self._checked = now
            with _BUSY_LOCK:
                sharers = max(1, _BUSY)
            self.threads = threads_for(self._meter.others(), usable_cores(), sharers)
        if self.threads != self._applied:
            import torch

            if self._applied:
                log.debug(
                    "torch threads %d -> %d (free cores changed)", self._applied, self.threads
                )
            torch.set_num_threads(self.threads)
            self._applied = self.threads
        return self.threads

    def __enter__(self) -> ThreadGovernor:
        """Count this governor as working (others in the process share with it)."""
        global _BUSY
        with _BUSY_LOCK:
            _BUSY += 1
        self.adjust()
        return self

    def __exit__(self, *exc: object) -> None:
        global _BUSY
        with _BUSY_LOCK:
            _BUSY -= 1
