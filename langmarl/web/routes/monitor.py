"""``GET /api/resources/history``: the machine's CPU, memory and load over time, for the
dashboard's Monitor (the reference system's Monitor tab; ``GET /api/resources/status`` is
the one reading of now).

While the server runs, a :class:`ResourceSampler` reads the machine every
:data:`INTERVAL_S` seconds into a ring of the last :data:`CAPACITY` samples (30 minutes),
so the history is there when a page opens; nothing is written to disk. CPU use is the share
of non-idle time across all cores between two readings of ``/proc/stat`` (the first sample
has none); memory is ``MemTotal - MemAvailable``; GPUs as the status route reads them.
The sampler starts and stops with the app (the router's lifespan); an app served without
its lifespan (a test client not entered) answers an empty history.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request

from langmarl.core.resources import resource_status

INTERVAL_S = 2.0
CAPACITY = 900
"""Samples kept: 30 minutes at :data:`INTERVAL_S`."""


def cpu_times() -> tuple[int, int] | None:
    """``(busy, total)`` clock ticks of all cores since boot (None without ``/proc``)."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return None
    ticks = [int(v) for v in fields[:8]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return sum(ticks) - idle, sum(ticks)


class ResourceSampler:
    """Reads the machine every ``interval_s`` seconds into a ring of ``capacity`` samples.

    Args:
        disk_path: Whose disk the samples measure (the runs directory).
        interval_s: Seconds between two samples.
        capacity: Samples kept (the oldest are dropped).
    """

    def __init__(
        self, disk_path: Path, interval_s: float = INTERVAL_S, capacity: int = CAPACITY
    ) -> None:
        self.disk_path = disk_path
        self.interval_s = interval_s
        self.samples: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._last_cpu: tuple[int, int] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sample(self) -> dict[str, Any]:
        """One reading, appended to the ring (and returned)."""
        status = resource_status(self.disk_path)
        now_cpu, cpu_pct = cpu_times(), None
        if now_cpu is not None and self._last_cpu is not None:
            busy, total = (a - b for a, b in zip(now_cpu, self._last_cpu, strict=True))
            cpu_pct = round(100.0 * busy / total, 1) if total > 0 else None
        self._last_cpu = now_cpu
        memory = status["memory"]
        used = None if memory["total"] is None else memory["total"] - (memory["available"] or 0)
        reading = {
            "time": time.time(), "cpu_pct": cpu_pct, "load_1": status["load_average"][0],
            "cpus_usable": status["cpus_usable"], "memory_used": used,
            "memory_total": memory["total"], "gpus": status["gpus"],
        }  # fmt: skip
        self.samples.append(reading)
        return reading

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval_s)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="resource-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


@asynccontextmanager
async def sampling(app: FastAPI) -> AsyncIterator[None]:
    """Sample while the app runs (its state's ``resource_sampler``)."""
    sampler = ResourceSampler(app.state.dashboard.root)
    app.state.resource_sampler = sampler
    sampler.start()
    try:
        yield
    finally:
        sampler.stop()


router = APIRouter(tags=["resources"], lifespan=sampling)


@router.get("/resources/history")
def history(
    request: Request,
    since: float | None = Query(None, description="Only samples taken after this time (s)."),
) -> dict[str, Any]:
    """The samples taken so far, oldest first (``time`` in seconds since the epoch;
    ``cpu_pct`` of all cores, ``load_1``, ``memory_used``/``memory_total`` in bytes, GPUs),
    the interval between them and how many are kept."""
    sampler: ResourceSampler | None = getattr(request.app.state, "resource_sampler", None)
    samples = list(sampler.samples) if sampler is not None else []
    if since is not None:
        samples = [s for s in samples if s["time"] > since]
    return {"interval_s": sampler.interval_s if sampler else INTERVAL_S,
            "capacity": sampler.samples.maxlen if sampler else CAPACITY,
            "samples": samples}  # fmt: skip
