"""Exact and numeric match verifiers."""

from __future__ import annotations

import pytest

from langmarl.extractors import BaseExtractor, LastNumberStrategy
from langmarl.verifiers import ExactMatchVerifier, NumericVerifier, VerificationOutcome
from langmarl.verifiers.match import normalize_text, parse_number


def test_normalize_and_parse_number() -> None:
    assert normalize_text("  Paris \n France ") == "paris france"
    assert normalize_text("A", case_sensitive=True) == "A"
    assert parse_number("1,234.5") == 1234.5
    assert parse_number("$3") == 3 and parse_number("50%") == 50 and parse_number("1/4") == 0.25
    assert (
        parse_number("1/0") is None and parse_number("abc") is None and parse_number("nan") is None
    )


async def test_exact_match() -> None:
    verifier = ExactMatchVerifier()
    await verifier.setup()
    assert (await verifier.verify(" PARIS ", "paris")).status == VerificationOutcome.SUCCESS
    assert (await verifier.verify("Lyon", "paris")).status == VerificationOutcome.FAILURE
    strict = ExactMatchVerifier(case_sensitive=True)
    await strict.setup()
    assert (await strict.verify("PARIS", "paris")).status == VerificationOutcome.FAILURE
    no_reference = await verifier.verify("a", None)
    assert no_reference.status == VerificationOutcome.ERROR


@pytest.mark.parametrize(
    ("solution", "reference", "status"),
    [
        ("The total is 1,000.", "1000", VerificationOutcome.SUCCESS),
        ("3.0000000001", "3", VerificationOutcome.SUCCESS),
        ("no number", "3", VerificationOutcome.FAILURE),
        ("4", "3", VerificationOutcome.FAILURE),
        ("4", "three", VerificationOutcome.ERROR),
    ],
)
async def test_numeric_match(solution: str, reference: str, status: VerificationOutcome) -> None:
    verifier = NumericVerifier(extractor=BaseExtractor([[LastNumberStrategy()]]))
    await verifier.setup()
    assert (await verifier.verify(solution, reference)).status == status
