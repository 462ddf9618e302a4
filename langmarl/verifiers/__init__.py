"""Verifiers: check an LLM's solution against a reference (math, Python execution, matching)."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "BaseVerifier": "langmarl.verifiers.base",
    "VerifierStateError": "langmarl.verifiers.base",
    "ExactMatchVerifier": "langmarl.verifiers.match",
    "NumericVerifier": "langmarl.verifiers.match",
    "MathVerifier": "langmarl.verifiers.math_verifier",
    "PythonVerifier": "langmarl.verifiers.python_verifier",
    "CodeTestReport": "langmarl.verifiers.code_tests",
    "run_code_tests": "langmarl.verifiers.code_tests",
    "run_code_tests_async": "langmarl.verifiers.code_tests",
    "VerificationOutcome": "langmarl.verifiers.models",
    "VerificationResult": "langmarl.verifiers.models",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.verifiers.base import BaseVerifier, VerifierStateError
    from langmarl.verifiers.code_tests import CodeTestReport, run_code_tests, run_code_tests_async
    from langmarl.verifiers.match import ExactMatchVerifier, NumericVerifier
    from langmarl.verifiers.math_verifier import MathVerifier
    from langmarl.verifiers.models import VerificationOutcome, VerificationResult
    from langmarl.verifiers.python_verifier import PythonVerifier
