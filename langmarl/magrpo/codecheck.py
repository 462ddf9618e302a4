"""Checking code written by agents: static AST checks here, tests in the sandbox subprocess.

Agent code never runs in the trainer's process: tests run through
:func:`langmarl.verifiers.code_tests.run_code_tests`, one sandboxed subprocess per check.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from langmarl.extractors import python_blocks

if TYPE_CHECKING:
    from langmarl.verifiers.code_tests import CodeTestReport


def extract_code(text: str) -> str:
    """The code in a completion: its first python (or untagged) fenced block, also one cut off
    by the token budget; else the whole text."""
    blocks = python_blocks(text, unclosed=True)
    return (blocks[0] if blocks else text).strip()


@dataclass
class StaticReport:
    """What the AST says about a piece of code."""

    syntax_error: str | None
    functions: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)


def static_check(code: str) -> StaticReport:
    """Parse ``code``: syntax error (with line/column), defined and called function names."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return StaticReport(f"SyntaxError line {exc.lineno} col {exc.offset}: {exc.msg}")
    functions = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    calls = [
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    return StaticReport(None, functions, calls)


def select_tests(tests: Sequence[str], sandbox_slice: int | str | None) -> list[str]:
    """``sandbox_slice``: 0, None or "all" → every test; k > 0 → the first k; k < 0 → last |k|."""
    if sandbox_slice in (0, None, "all"):
        return list(tests)
    if not isinstance(sandbox_slice, int):
        raise ValueError(f"sandbox_slice is {sandbox_slice!r}: use an int, 0, None or 'all'")
    return list(tests[:sandbox_slice]) if sandbox_slice > 0 else list(tests[sandbox_slice:])


def run_tests(code: str, tests: Sequence[str], timeout_s: float = 5.0) -> CodeTestReport:
    """Run each test (a statement such as ``assert f(1) == 2``) against ``code`` in the sandbox
    (:func:`~langmarl.verifiers.code_tests.run_code_tests`)."""
    from langmarl.sandbox import SandboxLimits
    from langmarl.verifiers.code_tests import run_code_tests

    return run_code_tests(code, tests, SandboxLimits(timeout_s=timeout_s))


def humaneval_asserts(test: str, entry_point: str) -> list[str]:
    """Split a HumanEval ``check(candidate)`` body into single assert statements."""
    asserts = []
    for line in test.splitlines():
        stripped = line.strip()
        if stripped.startswith("assert") and "candidate" in stripped:
            asserts.append(stripped.replace("candidate", entry_point))
    return asserts
