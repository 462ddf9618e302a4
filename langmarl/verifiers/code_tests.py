"""The one way to run LLM-written code and tests on it: in the sandbox, never in this process.

:func:`run_code_tests` (and :func:`run_code_tests_async`) run the code as ``__main__``, then
each test (a statement such as ``assert f(1) == 2``, or a block such as a HumanEval
``check`` function and its call) in a copy of the code's namespace, in one sandboxed
subprocess (:func:`langmarl.sandbox.run_python`). The answer says which tests passed, how
each failed, what the code printed and, when the code itself did not run to the end (an
exception, a timeout, a limit), why.

Used by :class:`~langmarl.verifiers.PythonVerifier` (no tests: the printed output is
compared), the language coding reward and MAGRPO's code checks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from langmarl.sandbox import SandboxLimits, SandboxResult, run_python, run_python_async

_MARK = "@@LANGMARL-TEST-RESULTS@@"

# Runs inside the sandbox. A failure of the code itself propagates (its traceback and exit
# code are the reason, and the sandbox sees a MemoryError); a clean sys.exit() is a clean
# end; each test fails on its own.
_HARNESS = f"""
import json, sys
namespace = {{"__name__": "__main__", "__file__": "solution.py"}}
try:
    exec(compile(open("solution.py").read(), "solution.py", "exec"), namespace)
except SystemExit as exc:
    if exc.code not in (None, 0):
        raise
results = []
for test in json.load(open("tests.json")):
    try:
        exec(compile(test, "test", "exec"), dict(namespace))
        results.append([True, ""])
    except BaseException as exc:
        results.append([False, f"{{type(exc).__name__}}: {{exc}}"[:200]])
sys.stdout.flush()
print("{_MARK}" + json.dumps(results))
"""


@dataclass(frozen=True)
class CodeTestReport:
    """What running code and its tests in the sandbox showed.

    Attributes:
        passed: Per test, whether it passed (all False when the code did not run).
        errors: Per test, ``"ExceptionType: message"`` of its failure (``""`` if it passed).
        output: What the code printed (the harness's own report removed).
        failure: Why the code itself did not run to the end (an exception, a timeout, a
            limit), else ``None``.
        run: The sandbox run (return code, stderr, ``killed_reason``, duration).
    """

    passed: list[bool]
    errors: list[str]
    output: str
    failure: str | None
    run: SandboxResult = field(repr=False)

    @property
    def ok(self) -> bool:
        """The code ran to the end and every test passed."""
        return self.failure is None and all(self.passed)

    @property
    def fraction(self) -> float:
        """Share of the tests that passed (0 without tests)."""
        return sum(self.passed) / len(self.passed) if self.passed else 0.0


def run_code_tests(
    code: str, tests: Sequence[str] = (), limits: SandboxLimits | None = None
) -> CodeTestReport:
    """Run ``code`` and then each of ``tests`` in one sandboxed subprocess.

    Args:
        code: The program (LLM-written), run as ``__main__``.
        tests: Statements run after it, each in a copy of its namespace.
        limits: Sandbox limits (default: :class:`~langmarl.sandbox.SandboxLimits`).
    """
    run = run_python(_HARNESS, limits=limits or SandboxLimits(), files=_files(code, tests))
    return _report(run, len(tests))


async def run_code_tests_async(
    code: str, tests: Sequence[str] = (), limits: SandboxLimits | None = None
) -> CodeTestReport:
    """:func:`run_code_tests` without blocking the event loop."""
    run = await run_python_async(
        _HARNESS, limits=limits or SandboxLimits(), files=_files(code, tests)
    )
    return _report(run, len(tests))


def _files(code: str, tests: Sequence[str]) -> dict[str, str]:
    return {"solution.py": code, "tests.json": json.dumps(list(tests))}


def _report(run: SandboxResult, count: int) -> CodeTestReport:
    marker = run.stdout.rfind(_MARK)
    if marker < 0 or not run.ok:
        failure = failure_reason(run)
        output = run.stdout if marker < 0 else run.stdout[:marker]
        return CodeTestReport([False] * count, [failure] * count, output, failure, run)
    pairs = json.loads(run.stdout[marker + len(_MARK) :].strip().splitlines()[0])
    passed, errors = [bool(ok) for ok, _ in pairs], [str(error) for _, error in pairs]
    return CodeTestReport(passed, errors, run.stdout[:marker], None, run)


def failure_reason(run: SandboxResult) -> str:
    """One line saying why a sandboxed program failed (timeout, limit, or its last error)."""
    if run.timed_out:
        return f"the program ran longer than {run.duration_s:.1f}s and was killed"
    last = run.stderr.strip().splitlines()[-1:] or ["(no error output)"]
    reason = f" ({run.killed_reason})" if run.killed_reason else ""
    return f"the program exited with code {run.returncode}{reason}: {last[0][:300]}"
