"""Running LLM-written code and tests on it in the sandbox (real subprocesses)."""

from __future__ import annotations

from langmarl.sandbox import SandboxLimits
from langmarl.verifiers.code_tests import run_code_tests, run_code_tests_async

ADD = "def add(a, b):\n    return a + b\n"


def test_each_test_passes_or_fails_on_its_own() -> None:
    report = run_code_tests(ADD, ["assert add(1, 2) == 3", "assert add(1, 2) == 4", "x = y"])
    assert report.passed == [True, False, False] and report.failure is None
    assert report.errors[1].startswith("AssertionError") and "NameError" in report.errors[2]
    assert not report.ok and abs(report.fraction - 1 / 3) < 1e-9


def test_the_code_output_and_a_clean_exit_are_kept() -> None:
    report = run_code_tests("import sys\nprint('hi', __name__, __file__)\nsys.exit(0)\n")
    assert report.ok and report.output == "hi __main__ solution.py\n" and report.passed == []


async def test_code_that_fails_to_run_fails_every_test_with_the_reason() -> None:
    report = await run_code_tests_async("raise ValueError('nope')", ["assert True"] * 2)
    assert report.passed == [False, False] and report.failure is not None
    assert "ValueError: nope" in report.failure and report.errors == [report.failure] * 2
    hang = await run_code_tests_async(
        "while True: pass", ["assert True"], SandboxLimits(timeout_s=1)
    )
    assert hang.run.timed_out and "killed" in (hang.failure or "")
