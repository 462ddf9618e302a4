"""Shared test configuration."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

# The embedded model runs on the CPU; two threads is the whole machine in CI.
os.environ.setdefault("LANGMARL_TORCH_THREADS", "2")


def _tensorboard_scalars(run_dir: Path, tag: str) -> list[tuple[int, float]]:
    """Every (step, value) of ``tag`` in every event file under ``<run_dir>/tensorboard``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    points = []
    for events_file in sorted((run_dir / "tensorboard").rglob("events.out.tfevents.*")):
        events = EventAccumulator(str(events_file))
        events.Reload()
        if tag in events.Tags()["scalars"]:
            points += [(e.step, e.value) for e in events.Scalars(tag)]
    return sorted(points)


@pytest.fixture
def tensorboard_scalars() -> Callable[[Path, str], list[tuple[int, float]]]:
    """Reads a run's TensorBoard scalars back: ``tensorboard_scalars(run_dir, tag)``."""
    return _tensorboard_scalars
