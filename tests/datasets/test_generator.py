"""BaseGenerator: buffered async generation, JSONL cache, save/flush."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langmarl.datasets import BaseGenerator, DataPoint


class Counting(BaseGenerator):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls: list[int] = []

    async def generate_new(self, n: int, **kwargs: Any) -> list[DataPoint]:
        start = sum(self.calls)
        self.calls.append(n)
        return [DataPoint(question=f"q{start + i}", final_answer=str(start + i)) for i in range(n)]


async def test_samples_in_order_generating_a_buffer_at_a_time(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"
    generator = Counting(buffer=3, cache=cache)
    points = [await generator.async_sample() for _ in range(4)]
    assert [p.question for p in points] == ["q0", "q1", "q2", "q3"]
    assert generator.calls == [3, 3] and len(generator) == 6
    assert len(cache.read_text().splitlines()) == 6


async def test_save_and_flush_and_reload(tmp_path: Path) -> None:
    generator = Counting(buffer=2)
    await generator.async_sample()
    saved = tmp_path / "out.jsonl"
    generator.flush(saved)
    assert len(generator) == 0
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [line["question"] for line in lines] == ["q0", "q1"]
    reloaded = Counting(data_path=saved)
    assert (await reloaded.async_sample()).question == "q0"
    assert reloaded.calls == []  # served from the file first


class Empty(BaseGenerator):
    async def generate_new(self, n: int, **kwargs: Any) -> list[DataPoint]:
        return []


async def test_generator_that_produces_nothing_fails_clearly() -> None:
    with pytest.raises(RuntimeError, match="returned no data points"):
        await Empty().async_sample()
    with pytest.raises(ValueError, match="buffer"):
        Empty(buffer=0)
