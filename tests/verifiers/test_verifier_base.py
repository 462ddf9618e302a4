"""BaseVerifier: setup, extraction, timeout, retries, batch concurrency, failures stay alone."""

from __future__ import annotations

import asyncio

import pytest

from langmarl.extractors import BaseExtractor, BoxedStrategy
from langmarl.verifiers import (
    BaseVerifier,
    VerificationOutcome,
    VerificationResult,
    VerifierStateError,
)


class Scripted(BaseVerifier):
    """Correct if solution == reference; 'slow' sleeps, 'boom' raises, 'flaky' fails once."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.calls: list[str] = []
        self.running = 0
        self.max_running = 0

    async def _verify_implementation(
        self, solution: str, reference: str | None
    ) -> VerificationResult:
        self.calls.append(solution)
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            await asyncio.sleep(0.01)
            if solution == "slow":
                await asyncio.sleep(10)
            if solution == "boom":
                raise KeyError("verifier bug")
            if solution == "flaky" and self.calls.count("flaky") == 1:
                raise ConnectionError("transient")
            ok = solution == reference or solution == "flaky"
            return VerificationResult(
                status=VerificationOutcome.SUCCESS if ok else VerificationOutcome.FAILURE,
                result=solution,
            )
        finally:
            self.running -= 1


async def test_verify_requires_setup() -> None:
    verifier = Scripted()
    with pytest.raises(VerifierStateError, match="setup"):
        await verifier.verify("a", "a")
    with pytest.raises(RuntimeError):
        await verifier.verify("a", "a")


async def test_success_failure_and_duration() -> None:
    verifier = Scripted()
    await verifier.setup()
    ok = await verifier.verify("a", "a")
    bad = await verifier.verify("a", "b")
    assert ok.status == VerificationOutcome.SUCCESS and ok.duration > 0
    assert ok.metadata["attempts"] == 1
    assert bad.status == VerificationOutcome.FAILURE
    await verifier.cleanup()


@pytest.mark.parametrize("solution", ["", "   \n", None, 42])
async def test_empty_or_non_text_solutions_fail_without_calling_the_check(solution: object) -> None:
    verifier = Scripted()
    await verifier.setup()
    result = await verifier.verify(solution, "a")  # type: ignore[arg-type]
    assert result.status == VerificationOutcome.FAILURE and "nothing to verify" in (
        result.error_message or ""
    )
    assert verifier.calls == []


async def test_extractor_runs_first() -> None:
    verifier = Scripted(extractor=BaseExtractor([[BoxedStrategy()]]))
    await verifier.setup()
    assert (await verifier.verify(r"so \boxed{7}", "7")).status == VerificationOutcome.SUCCESS
    missing = await verifier.verify("no box", "7")
    assert missing.status == VerificationOutcome.FAILURE and verifier.calls == ["7"]


async def test_timeout_retries_and_errors() -> None:
    verifier = Scripted(timeout=0.2, max_retries=2, retry_delay=0.0)
    await verifier.setup()
    assert (await verifier.verify("slow", "x")).status == VerificationOutcome.TIMEOUT
    flaky = await verifier.verify("flaky", "x")
    assert flaky.status == VerificationOutcome.SUCCESS and flaky.metadata["attempts"] == 2
    boom = await verifier.verify("boom", "x")
    assert boom.status == VerificationOutcome.ERROR and "KeyError" in (boom.error_message or "")
    assert verifier.calls.count("boom") == 3


async def test_batch_keeps_order_bounds_concurrency_and_failures_stay_alone() -> None:
    verifier = Scripted(timeout=0.3, max_parallel=2, max_retries=0)
    await verifier.setup()
    solutions = ["a", "boom", "slow", "b", "c"]
    results = await verifier.verify_batch(solutions, ["a", "x", "x", "b", "z"])
    assert [r.status for r in results] == [
        VerificationOutcome.SUCCESS,
        VerificationOutcome.ERROR,
        VerificationOutcome.TIMEOUT,
        VerificationOutcome.SUCCESS,
        VerificationOutcome.FAILURE,
    ]
    assert verifier.max_running <= 2
    with pytest.raises(RuntimeError, match=r"items \[1\]"):
        await verifier.verify_batch(["a", "boom"], ["a", "x"], raise_on_error=True)
    with pytest.raises(ValueError, match="2 solutions but 1"):
        await verifier.verify_batch(["a", "b"], ["a"])


def test_constructor_checks() -> None:
    with pytest.raises(ValueError, match="max_parallel"):
        Scripted(max_parallel=0)
    with pytest.raises(ValueError, match="max_retries"):
        Scripted(max_retries=-1)
