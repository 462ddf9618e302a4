"""``PythonVerifier``: run the solution's code in the sandbox and check its output."""

from __future__ import annotations

import ast
import importlib.util
import math
from typing import Any

from langmarl.core.errors import MissingDependencyError
from langmarl.extractors.base import BaseExtractor
from langmarl.sandbox import SandboxLimits
from langmarl.verifiers.base import BaseVerifier
from langmarl.verifiers.code_tests import run_code_tests_async
from langmarl.verifiers.models import VerificationOutcome, VerificationResult

_GRACE_S = 5.0


def outputs_match(output: str, reference: str, float_tolerance: float | None = None) -> bool:
    """Whether a program's stdout matches the reference.

    Equal after stripping, or equal as Python literals (``"[1,2]"`` vs ``"[1, 2]"``), or —
    with ``float_tolerance`` — numbers (also inside lists/tuples) within that tolerance.
    """
    if output.strip() == reference.strip():
        return True
    try:
        got, want = ast.literal_eval(output.strip()), ast.literal_eval(reference.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return _values_match(got, want, float_tolerance)


def _values_match(got: Any, want: Any, tolerance: float | None) -> bool:
    numbers = (int, float)
    if tolerance is not None and isinstance(got, numbers) and isinstance(want, numbers):
        return math.isclose(float(got), float(want), rel_tol=0.0, abs_tol=tolerance)
    if isinstance(got, list | tuple) and isinstance(want, list | tuple) and len(got) == len(want):
        return type(got) is type(want) and all(
            _values_match(g, w, tolerance) for g, w in zip(got, want, strict=True)
        )
    return bool(got == want)


class PythonVerifier(BaseVerifier):
    """Runs the (extracted) code in the sandbox; correct if it exits cleanly and prints the
    reference answer (any clean exit when the reference is ``None``).

    The code never runs in this process: it gets a fresh temp dir, no inherited secrets, a
    memory limit, and on timeout its whole process group is killed (see
    :mod:`langmarl.sandbox`).

    Args:
        extractor: Optional extractor applied first (e.g. fenced code).
        timeout: Seconds the program may run.
        required_packages: Import names the code needs; checked at ``setup``.
        float_tolerance: Absolute tolerance when comparing printed numbers.
        limits: Full sandbox limits (their ``timeout_s`` is replaced by ``timeout``).
        **kwargs: Passed to :class:`BaseVerifier`.
    """

    def __init__(
        self,
        extractor: BaseExtractor | None = None,
        timeout: float = 30.0,
        required_packages: list[str] | None = None,
        float_tolerance: float | None = None,
        limits: SandboxLimits | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("max_retries", 0)  # a program's failure is its answer, not a glitch
        super().__init__(extractor=extractor, timeout=timeout + _GRACE_S, **kwargs)
        self.required_packages = list(required_packages or [])
        self.float_tolerance = float_tolerance
        base = limits or SandboxLimits()
        self.limits = base.model_copy(update={"timeout_s": timeout})

    async def _setup(self, **kwargs: Any) -> None:
        for package in self.required_packages:
            if importlib.util.find_spec(package) is None:
                raise MissingDependencyError(
                    package, None, "PythonVerifier's required_packages", f"pip install {package}"
                )

    async def _verify_implementation(
        self, solution: str, reference_answer: str | None
    ) -> VerificationResult:
        report = await run_code_tests_async(solution, limits=self.limits)
        run = report.run
        metadata = {
            "returncode": run.returncode,
            "stderr": run.stderr[-2000:],
            "killed_reason": run.killed_reason,
        }
        if report.failure is not None:
            return VerificationResult(
                status=VerificationOutcome.TIMEOUT
                if run.timed_out
                else VerificationOutcome.FAILURE,
                result=report.output[-2000:],
                metadata=metadata,
                error_message=report.failure,
            )
        same = reference_answer is None or outputs_match(
            report.output, reference_answer, self.float_tolerance
        )
        return VerificationResult(
            status=VerificationOutcome.SUCCESS if same else VerificationOutcome.FAILURE,
            result=report.output[-2000:],
            metadata=metadata,
            error_message=None
            if same
            else f"printed {report.output.strip()[:200]!r}, expected {reference_answer!r}",
        )
