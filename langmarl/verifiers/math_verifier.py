"""``MathVerifier``: mathematical equivalence of answers via ``math-verify``."""

from __future__ import annotations

import asyncio
from typing import Any

from langmarl.core.errors import MissingDependencyError
from langmarl.extractors.base import BaseExtractor
from langmarl.verifiers.base import BaseVerifier
from langmarl.verifiers.models import VerificationOutcome, VerificationResult


class MathVerifier(BaseVerifier):
    r"""Checks that a solution's answer equals the reference mathematically.

    ``"0.5"``, ``"\frac{1}{2}"`` and ``"The answer is \boxed{1/2}"`` all match ``"1/2"``.
    Parsing runs in a worker thread, so the verifier's ``timeout`` bounds it.

    Args:
        extractor: Optional extractor applied first (e.g. ``\boxed{}``).
        timeout: Seconds per attempt.
        float_rounding: Decimal places floats are rounded to before comparing.
        numeric_precision: Significant digits for numeric comparison.
        enable_wrapping: Wrap bare answers in ``$…$`` so LaTeX without delimiters parses.
        **kwargs: Passed to :class:`BaseVerifier`.
    """

    def __init__(
        self,
        extractor: BaseExtractor | None = None,
        timeout: float | None = 30.0,
        float_rounding: int = 6,
        numeric_precision: int = 15,
        enable_wrapping: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(extractor=extractor, timeout=timeout, **kwargs)
        self.float_rounding = float_rounding
        self.numeric_precision = numeric_precision
        self.enable_wrapping = enable_wrapping

    async def _setup(self, **kwargs: Any) -> None:
        try:
            import math_verify  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError("math-verify", "text", "MathVerifier") from exc

    async def _verify_implementation(
        self, solution: str, reference_answer: str | None
    ) -> VerificationResult:
        if reference_answer is None:
            return VerificationResult(
                status=VerificationOutcome.ERROR,
                result=solution,
                error_message="MathVerifier needs a reference answer",
            )
        return await asyncio.to_thread(self._compare, solution, reference_answer)

    def _wrap(self, text: str) -> str:
        if self.enable_wrapping and "$" not in text and "\\boxed" not in text:
            return f"${text}$"
        return text

    def _compare(self, solution: str, reference: str) -> VerificationResult:
        from math_verify import parse, verify

        gold = parse(self._wrap(reference), parsing_timeout=None)
        answer = parse(self._wrap(solution), parsing_timeout=None)
        if not gold:
            return VerificationResult(
                status=VerificationOutcome.ERROR,
                result=solution[:1000],
                error_message=f"math-verify cannot parse the reference answer {reference!r}",
            )
        if not answer:
            return VerificationResult(
                status=VerificationOutcome.FAILURE,
                result=solution[:1000],
                error_message="no mathematical answer found in the solution",
            )
        same = verify(
            gold,
            answer,
            float_rounding=self.float_rounding,
            numeric_precision=self.numeric_precision,
            timeout_seconds=None,
        )
        return VerificationResult(
            status=VerificationOutcome.SUCCESS if same else VerificationOutcome.FAILURE,
            result=str(answer[-1]),
            metadata={"parsed_reference": str(gold[0]), "parsed_solution": str(answer[0])},
            error_message=None if same else f"{answer[0]} is not equal to {gold[0]}",
        )
