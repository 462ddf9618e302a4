"""PythonVerifier: solutions run in the real sandbox subprocess."""

from __future__ import annotations

import pytest

from langmarl.core.errors import MissingDependencyError
from langmarl.extractors import BaseExtractor, FencedCodeStrategy
from langmarl.sandbox import SandboxLimits
from langmarl.verifiers import PythonVerifier, VerificationOutcome
from langmarl.verifiers.python_verifier import outputs_match


def test_outputs_match() -> None:
    assert outputs_match("3\n", "3")
    assert outputs_match("[1,2]", "[1, 2]")
    assert not outputs_match("[1, 2]", "(1, 2)")
    assert outputs_match("0.30000000000000004", "0.3", float_tolerance=1e-9)
    assert not outputs_match("0.31", "0.3", float_tolerance=1e-9)
    assert outputs_match("[0.1, 2]", "[0.1000001, 2]", float_tolerance=1e-3)
    assert not outputs_match("garbage(", "1")


async def test_correct_wrong_crashing_and_hanging_code_in_one_batch() -> None:
    verifier = PythonVerifier(
        extractor=BaseExtractor([[FencedCodeStrategy()]]), timeout=2.0, max_parallel=4
    )
    await verifier.setup()
    solutions = [
        "```python\nprint(sum(range(5)))\n```",
        "```python\nprint(11)\n```",
        "```python\nraise ValueError('nope')\n```",
        "```python\nwhile True: pass\n```",
        "no code at all",
    ]
    results = await verifier.verify_batch(solutions, ["10"] * 5)
    statuses = [r.status for r in results]
    assert statuses == [
        VerificationOutcome.SUCCESS,
        VerificationOutcome.FAILURE,
        VerificationOutcome.FAILURE,
        VerificationOutcome.TIMEOUT,
        VerificationOutcome.FAILURE,
    ]
    assert "ValueError: nope" in (results[2].error_message or "")
    assert results[3].metadata["killed_reason"] == "timeout"
    await verifier.cleanup()


async def test_no_reference_means_a_clean_exit_passes() -> None:
    verifier = PythonVerifier(timeout=5.0)
    await verifier.setup()
    assert (await verifier.verify("assert 1 + 1 == 2", None)).status == VerificationOutcome.SUCCESS
    assert (await verifier.verify("assert 1 + 1 == 3", None)).status == VerificationOutcome.FAILURE


async def test_code_cannot_see_secrets_or_exceed_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-verifier-secret")
    verifier = PythonVerifier(timeout=5.0, limits=SandboxLimits(memory_mb=256))
    await verifier.setup()
    secret = await verifier.verify("import os; print(os.environ.get('OPENAI_API_KEY'))", "None")
    assert secret.status == VerificationOutcome.SUCCESS
    bomb = await verifier.verify("x = bytearray(2 * 1024 ** 3)", None)
    assert (
        bomb.status == VerificationOutcome.FAILURE
        and bomb.metadata["killed_reason"] == "memory_limit"
    )


async def test_missing_required_package_fails_setup_naming_it() -> None:
    verifier = PythonVerifier(required_packages=["json", "surely_not_installed_pkg"])
    with pytest.raises(MissingDependencyError, match="surely_not_installed_pkg"):
        await verifier.setup()
