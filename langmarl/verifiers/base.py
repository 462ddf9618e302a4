"""``BaseVerifier``: extraction, timeout, retries and bounded batch concurrency around a check.

Subclasses implement ``_verify_implementation`` (and optionally ``_setup``/``_cleanup``).
``verify`` never raises for bad solutions or a failing check: every problem becomes a
``VerificationResult`` (``FAILURE``, ``ERROR`` or ``TIMEOUT``), so in a batch one bad item
fails alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from langmarl.core.errors import LangmarlError
from langmarl.extractors.base import BaseExtractor
from langmarl.verifiers.models import VerificationOutcome, VerificationResult

logger = logging.getLogger(__name__)


class VerifierStateError(LangmarlError, RuntimeError):
    """A verifier was used before ``setup`` or after ``cleanup``."""


class BaseVerifier(ABC):
    """Base class of all verifiers.

    Args:
        extractor: Applied to each solution first; ``None`` extraction is a ``FAILURE``.
        max_parallel: Concurrent verifications in ``verify_batch`` (default: CPU count).
        timeout: Seconds per attempt; ``None``: no limit.
        max_retries: Extra attempts after a verifier *error* (not after a wrong answer).
        retry_delay: Seconds between attempts.
        **kwargs: Kept as ``self.config``.
    """

    def __init__(
        self,
        extractor: BaseExtractor | None = None,
        max_parallel: int | None = None,
        timeout: float | None = None,
        max_retries: int = 3,
        retry_delay: float = 1.0,
        **kwargs: Any,
    ) -> None:
        if max_parallel is not None and max_parallel < 1:
            raise ValueError(f"max_parallel must be at least 1, got {max_parallel}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.extractor = extractor
        self.max_parallel = max_parallel or os.cpu_count() or 4
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.config = dict(kwargs)
        self._is_setup = False

    async def setup(self, **kwargs: Any) -> None:
        """Acquire the verifier's resources (idempotent)."""
        if self._is_setup:
            return
        if self.extractor is not None:
            await self.extractor.setup()
        await self._setup(**kwargs)
        self._is_setup = True

    async def cleanup(self) -> None:
        """Release the verifier's resources (idempotent)."""
        if not self._is_setup:
            return
        await self._cleanup()
        if self.extractor is not None:
            await self.extractor.cleanup()
        self._is_setup = False

    async def _setup(self, **kwargs: Any) -> None:  # noqa: B027 - optional hook
        """Subclass hook: acquire resources."""

    async def _cleanup(self) -> None:  # noqa: B027 - optional hook
        """Subclass hook: release resources."""

    @abstractmethod
    async def _verify_implementation(
        self, solution: str, reference_answer: str | None
    ) -> VerificationResult:
        """Check one (extracted) solution. May raise; ``verify`` turns that into ``ERROR``."""

    async def verify(self, solution: str, reference_answer: str | None) -> VerificationResult:
        """Verify one solution against the reference, with extraction, timeout and retries.

        Raises:
            VerifierStateError: (a ``RuntimeError``) if ``setup`` has not been awaited.
        """
        if not self._is_setup:
            raise VerifierStateError(f"{type(self).__name__} is not set up: await verifier.setup()")
        start = time.monotonic()
        candidate = await self._extract(solution)
        if candidate is None:
            return VerificationResult(
                status=VerificationOutcome.FAILURE,
                duration=time.monotonic() - start,
                error_message="nothing to verify: the extractor found no answer in the solution",
            )
        result = await self._attempts(candidate, reference_answer)
        return result.model_copy(update={"duration": time.monotonic() - start})

    async def _extract(self, solution: Any) -> str | None:
        if not isinstance(solution, str) or not solution.strip():
            return None
        if self.extractor is None:
            return solution
        return await self.extractor.extract(solution)

    async def _attempts(self, candidate: str, reference: str | None) -> VerificationResult:
        last_error = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                await asyncio.sleep(self.retry_delay)
            try:
                check = self._verify_implementation(candidate, reference)
                result = await asyncio.wait_for(check, self.timeout)
            except TimeoutError:
                return VerificationResult(
                    status=VerificationOutcome.TIMEOUT,
                    result=candidate[:1000],
                    error_message=f"verification took longer than {self.timeout}s",
                )
            except Exception as exc:  # any verifier bug must stay inside this one result
                last_error = f"{type(exc).__name__}: {exc}"
                logger.warning(
                    "%s attempt %d failed: %s", type(self).__name__, attempt + 1, last_error
                )
                continue
            return result.model_copy(
                update={"metadata": {**result.metadata, "attempts": attempt + 1}}
            )
        return VerificationResult(
            status=VerificationOutcome.ERROR,
            result=candidate[:1000],
            error_message=f"verifier failed {self.max_retries + 1} times; last: {last_error}",
        )

    async def verify_batch(
        self,
        solutions: Sequence[str],
        reference_answers: Sequence[str | None] | None = None,
        raise_on_error: bool = False,
    ) -> list[VerificationResult]:
        """Verify many solutions concurrently (at most ``max_parallel`` at a time).

        Each item succeeds or fails on its own; results keep the input order.

        Raises:
            ValueError: if the two lists differ in length.
            RuntimeError: with ``raise_on_error``, after all items ran, if any ended in
                ``ERROR`` or ``TIMEOUT``.
        """
        references = (
            list(reference_answers) if reference_answers is not None else [None] * len(solutions)
        )
        if len(references) != len(solutions):
            raise ValueError(
                f"verify_batch got {len(solutions)} solutions but "
                f"{len(references)} reference answers"
            )
        semaphore = asyncio.Semaphore(self.max_parallel)

        async def one(solution: str, reference: str | None) -> VerificationResult:
            async with semaphore:
                return await self.verify(solution, reference)

        results = list(
            await asyncio.gather(*(one(s, r) for s, r in zip(solutions, references, strict=True)))
        )
        failed = [
            i
            for i, r in enumerate(results)
            if r.status in (VerificationOutcome.ERROR, VerificationOutcome.TIMEOUT)
        ]
        if raise_on_error and failed:
            raise RuntimeError(
                f"verification failed for items {failed}: {results[failed[0]].error_message}"
            )
        return results
