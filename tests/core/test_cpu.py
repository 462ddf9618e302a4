"""Threads from the cores that are free (langmarl.core.cpu)."""

from __future__ import annotations

import os
import time

import pytest
import torch

from langmarl.core import cpu


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


@pytest.mark.parametrize(
    ("others", "cores", "sharers", "threads"),
    [
        (0.0, 2, 1, 2),  # a quiet machine: every core
        (0.3, 2, 1, 1),  # a core a third busy is not worth a second thread
        (0.2, 2, 1, 2),
        (1.0, 2, 1, 1),  # one busy process: the other core
        (3.5, 2, 1, 1),  # never fewer than one
        (0.0, 8, 2, 4),  # two workers in the process split the free cores
        (0.0, 2, 4, 1),
    ],
)
def test_threads_follow_the_free_cores(
    others: float, cores: int, sharers: int, threads: int
) -> None:
    assert cpu.threads_for(others, cores, sharers) == threads


def test_the_meter_counts_the_machine_minus_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([(10.0, 100.0, 5.0), (12.0, 104.0, 6.0)])  # (time, busy s, own CPU s)
    now = {"busy": 0.0, "own": 0.0}

    def monotonic() -> float:
        at, now["busy"], now["own"] = next(readings)
        return at

    monkeypatch.setattr(cpu.time, "monotonic", monotonic)
    monkeypatch.setattr(cpu, "_busy_seconds", lambda cpus: now["busy"])
    monkeypatch.setattr(cpu.time, "process_time", lambda: now["own"])
    # 4 busy core-seconds in 2 s, 1 of them this process's: others used 1.5 cores
    assert cpu.CoreMeter().others() == pytest.approx(1.5)


def test_the_meter_reads_this_machine() -> None:
    """On the real /proc/stat: what this process spends is not counted as others'."""
    cpus = set(os.sched_getaffinity(0))
    meter = cpu.CoreMeter()
    busy, own, began = cpu._busy_seconds(cpus), time.process_time(), time.monotonic()
    while time.process_time() - own < 0.3:  # CPU time, however busy the machine is
        _spin(0.05)
    others = meter.others()
    elapsed = time.monotonic() - began
    total = (cpu._busy_seconds(cpus) - busy) / elapsed  # type: ignore[operator]
    mine = (time.process_time() - own) / elapsed
    assert 0.0 <= others <= cpu.usable_cores()
    assert others == pytest.approx(max(0.0, total - mine), abs=0.25)


def test_an_explicit_count_wins_and_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("LANGMARL_TORCH_THREADS", "3")
        governor = cpu.ThreadGovernor(cpu.explicit_threads(), interval=0.0)
        assert governor.adjust() == 3 and torch.get_num_threads() == 3
        assert cpu.explicit_threads(5) == 5  # a config's count beats the variable
    finally:
        torch.set_num_threads(before)


def test_the_governor_measures_when_nothing_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGMARL_TORCH_THREADS", raising=False)
    before = torch.get_num_threads()
    try:
        monkeypatch.setattr(cpu, "usable_cores", lambda: 2)
        with cpu.ThreadGovernor(cpu.explicit_threads(), interval=0.0) as governor:
            monkeypatch.setattr(cpu.CoreMeter, "others", lambda self: 1.0)
            assert governor.adjust() == 1 == torch.get_num_threads()
            monkeypatch.setattr(cpu.CoreMeter, "others", lambda self: 0.0)
            assert governor.adjust() == 2 == torch.get_num_threads()
            with cpu.ThreadGovernor(None, interval=0.0):  # a second worker in the process
                assert governor.adjust() == 1
    finally:
        torch.set_num_threads(before)


def test_usable_cores_is_the_affinity() -> None:
    assert 1 <= cpu.usable_cores() <= len(os.sched_getaffinity(0))
