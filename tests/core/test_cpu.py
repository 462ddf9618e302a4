"""Threads from the cores that are free (langmarl.core.cpu)."""

from __future__ import annotations

import multiprocessing
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


def test_the_meter_sees_another_process_and_not_this_one() -> None:
    meter = cpu.CoreMeter()
    _spin(0.4)  # this process's own work is not "others"
    alone = meter.others()
    spinner = multiprocessing.get_context("spawn").Process(target=_spin, args=(2.0,))
    spinner.start()
    try:
        time.sleep(0.8)  # let it start (spawn imports), then measure it
        meter.others()
        time.sleep(0.8)
        beside = meter.others()
    finally:
        spinner.join()
    assert beside > alone + 0.5, (alone, beside)


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
    import os

    assert 1 <= cpu.usable_cores() <= len(os.sched_getaffinity(0))
