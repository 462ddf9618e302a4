"""MathVerifier with the real math-verify package."""

from __future__ import annotations

import pytest

from langmarl.verifiers import MathVerifier, VerificationOutcome


@pytest.mark.parametrize(
    ("solution", "reference", "status"),
    [
        (r"The answer is \boxed{\frac{1}{2}}", "0.5", VerificationOutcome.SUCCESS),
        ("$1/2$", r"\frac{1}{2}", VerificationOutcome.SUCCESS),
        ("x = 4", "4", VerificationOutcome.SUCCESS),
        (r"\boxed{3}", "4", VerificationOutcome.FAILURE),
        ("I don't know", "4", VerificationOutcome.FAILURE),
        ("", "4", VerificationOutcome.FAILURE),
    ],
)
async def test_math_equivalence(solution: str, reference: str, status: VerificationOutcome) -> None:
    verifier = MathVerifier(timeout=20)
    await verifier.setup()
    result = await verifier.verify(solution, reference)
    assert result.status == status, result


async def test_reference_problems_are_errors_and_batch_items_fail_alone() -> None:
    verifier = MathVerifier(timeout=20, enable_wrapping=True)
    await verifier.setup()
    results = await verifier.verify_batch(["2", "2", "x"], ["2", None, ""])
    assert [r.status for r in results] == [
        VerificationOutcome.SUCCESS,
        VerificationOutcome.ERROR,
        VerificationOutcome.ERROR,
    ]
