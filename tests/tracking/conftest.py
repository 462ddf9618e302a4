"""A recording tracker for the tracking tests."""

from __future__ import annotations

from typing import Any

import pytest


class Recorder:
    """A tracker that remembers every call."""

    name = "recorder"

    def __init__(self) -> None:
        self.logged: list[tuple[dict[str, float], int]] = []
        self.params: list[dict[str, Any]] = []
        self.closed = 0

    def log(self, metrics: dict[str, float], step: int) -> None:
        self.logged.append((metrics, step))

    def log_params(self, config: dict[str, Any]) -> None:
        self.params.append(config)

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def recorder_cls() -> type[Recorder]:
    return Recorder


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()
