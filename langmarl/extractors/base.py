"""Extractors: a fixed pipeline of stages, each a list of strategies tried in order.

Within a stage the first strategy that returns something wins; its output is the input of
the next stage. An extractor returns ``None`` when some stage finds nothing, never raises on
model output (a strategy that raises counts as finding nothing, and is logged).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence

logger = logging.getLogger(__name__)


class BaseExtractorStrategy(ABC):
    """One way of pulling the interesting part out of a response."""

    @abstractmethod
    async def extract(self, text: str) -> str | None:
        """The extracted string, or ``None`` if the text holds nothing of this shape."""


class BaseExtractor:
    """Runs a multi-stage pipeline of strategies over a response.

    Args:
        pipeline: Stages in order; each stage is a list of strategies tried in order.

    Raises:
        ValueError: if the pipeline or one of its stages is empty.
    """

    def __init__(self, pipeline: Sequence[Sequence[BaseExtractorStrategy]]) -> None:
        if not pipeline or any(not stage for stage in pipeline):
            raise ValueError(
                "BaseExtractor pipeline must be a non-empty list of non-empty stages, e.g. "
                "BaseExtractor([[BoxedStrategy(), LastNumberStrategy()]])"
            )
        self.pipeline = [list(stage) for stage in pipeline]
        self._is_setup = False

    @property
    def is_setup(self) -> bool:
        """Whether :meth:`setup` has run (and :meth:`cleanup` has not)."""
        return self._is_setup

    async def setup(self) -> None:
        """Acquire resources (none by default; idempotent)."""
        self._is_setup = True

    async def cleanup(self) -> None:
        """Release resources (idempotent)."""
        self._is_setup = False

    async def extract(self, response: str) -> str | None:
        """Run every stage over ``response``; ``None`` if any stage finds nothing."""
        current: str | None = response if isinstance(response, str) else None
        for stage in self.pipeline:
            if current is None:
                return None
            current = await _first_hit(stage, current)
        return current


async def _first_hit(stage: list[BaseExtractorStrategy], text: str) -> str | None:
    for strategy in stage:
        try:
            found = await strategy.extract(text)
        except Exception:  # a buggy strategy must not turn model output into a crash
            logger.exception("extraction strategy %s failed", type(strategy).__name__)
            continue
        if found is not None:
            return found
    return None
