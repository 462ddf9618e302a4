"""``BaseGenerator``: data points produced on demand (by an LLM, a program, …) into a buffer."""

from __future__ import annotations

import asyncio
import json
import random
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from langmarl.core.files import append_jsonl, atomic_write_text, read_jsonl
from langmarl.datasets.models import DataPoint


class BaseGenerator(ABC):
    """Generates data points in batches of ``buffer`` and hands them out one by one.

    Args:
        seed: Seed of the generator's own RNG (``self.rng``) for subclasses to use.
        buffer: How many points one :meth:`generate_new` call should produce.
        cache: A JSONL file every generated point is appended to (``None``: no cache).
        data_path: A JSONL file of earlier points to serve first.
        **kwargs: Kept as metadata.
    """

    def __init__(
        self,
        seed: int = 42,
        buffer: int = 20,
        cache: str | Path | None = None,
        data_path: str | Path | None = None,
        **kwargs: Any,
    ) -> None:
        if buffer < 1:
            raise ValueError(f"buffer must be at least 1, got {buffer}")
        self.rng = random.Random(seed)
        self.buffer = buffer
        self.cache = Path(cache) if cache is not None else None
        self._metadata = {"seed": seed, "buffer": buffer, **kwargs}
        self._data: list[DataPoint] = []
        self._queue: list[DataPoint] = []
        self._lock = asyncio.Lock()
        if data_path is not None:
            self._queue = [DataPoint.model_validate(item) for item in read_jsonl(Path(data_path))]

    @abstractmethod
    async def generate_new(self, n: int, **kwargs: Any) -> list[DataPoint]:
        """Produce ``n`` new data points (may return fewer; must not return none forever)."""

    async def async_sample(self) -> DataPoint:
        """The next data point, generating a new batch when the buffer is empty.

        Raises:
            RuntimeError: if ``generate_new`` produced nothing.
        """
        async with self._lock:
            if not self._queue:
                fresh = await self.generate_new(self.buffer)
                if not fresh:
                    raise RuntimeError(
                        f"{type(self).__name__}.generate_new({self.buffer}) returned no data points"
                    )
                self._record(fresh)
                self._queue.extend(fresh)
            return self._queue.pop(0)

    def _record(self, points: list[DataPoint]) -> None:
        self._data.extend(points)
        if self.cache is not None:
            for point in points:
                append_jsonl(self.cache, point.model_dump(mode="json"))

    def save_to_jsonl(self, path: str | Path) -> None:
        """Write every point generated so far to ``path`` (atomically)."""
        lines = [json.dumps(p.model_dump(mode="json"), ensure_ascii=False) for p in self._data]
        atomic_write_text(Path(path), "".join(line + "\n" for line in lines))

    def flush(self, path: str | Path) -> None:
        """Save every point generated so far to ``path`` and forget them (the buffer stays)."""
        self.save_to_jsonl(path)
        self._data = []

    def __len__(self) -> int:
        """Points generated so far."""
        return len(self._data)

    @property
    def metadata(self) -> dict[str, Any]:
        """A copy of the generator's metadata."""
        return dict(self._metadata)
