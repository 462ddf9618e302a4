"""Exact-match and numeric-match verifiers (pure comparisons, no dependencies)."""

from __future__ import annotations

import math
import re
from typing import Any

from langmarl.extractors.base import BaseExtractor
from langmarl.verifiers.base import BaseVerifier
from langmarl.verifiers.models import VerificationOutcome, VerificationResult

_SPACES = re.compile(r"\s+")


def normalize_text(text: str, case_sensitive: bool = False) -> str:
    """Trimmed, inner whitespace collapsed, lower-cased unless ``case_sensitive``."""
    collapsed = _SPACES.sub(" ", text.strip())
    return collapsed if case_sensitive else collapsed.lower()


def parse_number(text: str) -> float | None:
    """``"1,234.5"``/``"50%"``/``"$3"``/``"1/4"`` → a float; ``None`` if not a number."""
    cleaned = text.strip().replace(",", "").replace("$", "").rstrip("%").strip()
    if "/" in cleaned:
        numerator, _, denominator = cleaned.partition("/")
        top, bottom = parse_number(numerator), parse_number(denominator)
        return top / bottom if top is not None and bottom not in (None, 0) else None
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _result(same: bool, solution: str, reference: str) -> VerificationResult:
    return VerificationResult(
        status=VerificationOutcome.SUCCESS if same else VerificationOutcome.FAILURE,
        result=solution[:1000],
        error_message=None if same else f"{solution[:100]!r} does not match {reference[:100]!r}",
    )


def _error(message: str, solution: str) -> VerificationResult:
    """A configuration problem: reported as ``ERROR`` at once (retrying cannot help)."""
    return VerificationResult(
        status=VerificationOutcome.ERROR, result=solution[:1000], error_message=message
    )


class ExactMatchVerifier(BaseVerifier):
    """The (extracted) solution equals the reference after whitespace/case normalization.

    Args:
        extractor: Optional extractor applied first.
        case_sensitive: Compare case too.
        **kwargs: Passed to :class:`BaseVerifier`.
    """

    def __init__(
        self, extractor: BaseExtractor | None = None, case_sensitive: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(extractor=extractor, **kwargs)
        self.case_sensitive = case_sensitive

    async def _verify_implementation(
        self, solution: str, reference_answer: str | None
    ) -> VerificationResult:
        if reference_answer is None:
            return _error("ExactMatchVerifier needs a reference answer", solution)
        same = normalize_text(solution, self.case_sensitive) == normalize_text(
            reference_answer, self.case_sensitive
        )
        return _result(same, solution, reference_answer)


class NumericVerifier(BaseVerifier):
    """The (extracted) solution is a number within tolerance of the reference.

    Args:
        extractor: Optional extractor applied first (e.g. the last number).
        rel_tol: Relative tolerance.
        abs_tol: Absolute tolerance.
        **kwargs: Passed to :class:`BaseVerifier`.
    """

    def __init__(
        self,
        extractor: BaseExtractor | None = None,
        rel_tol: float = 1e-6,
        abs_tol: float = 1e-9,
        **kwargs: Any,
    ) -> None:
        super().__init__(extractor=extractor, **kwargs)
        self.rel_tol, self.abs_tol = rel_tol, abs_tol

    async def _verify_implementation(
        self, solution: str, reference_answer: str | None
    ) -> VerificationResult:
        reference = parse_number(reference_answer or "")
        if reference is None:
            return _error(
                f"NumericVerifier reference {reference_answer!r} is not a number", solution
            )
        value = parse_number(solution)
        same = value is not None and math.isclose(
            value, reference, rel_tol=self.rel_tol, abs_tol=self.abs_tol
        )
        return _result(same, solution, str(reference_answer))
