"""The machine beside a measurement: every figure in RESULTS.md carries the load average and the
CPU (model, AVX2 / AVX-512 / AMX: they decide the kernels, issue 37)."""

from __future__ import annotations

import os
import statistics
import threading

PRINTED = "LANGMARL_BENCH_MACHINE_PRINTED"
"""Set once the CPU line is printed, so the worker processes a benchmark starts (some in
another venv, without langmarl) do not print it again."""


def print_machine() -> None:
    """Print the CPU line (``langmarl.core.machine``) and the load average, once per benchmark
    (its worker processes inherit the mark and skip it)."""
    if os.environ.get(PRINTED):
        return
    os.environ[PRINTED] = "1"
    from langmarl.core.machine import describe

    print(f"{describe()}; load average {os.getloadavg()[0]:.2f}", flush=True)


class LoadSampler:
    """Reads the one-minute load average every ``interval`` seconds in a thread while a
    ``with`` block runs (and once at its start)."""

    def __init__(self, interval: float = 5.0) -> None:
        self.interval = interval
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.samples.append(round(os.getloadavg()[0], 2))
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> str:
        """``min-max (mean m)`` of the samples."""
        values = self.samples or [os.getloadavg()[0]]
        return f"{min(values):.1f}-{max(values):.1f} (mean {statistics.mean(values):.1f})"
