"""Validate LLM-written reward code before it is trained on.

Checks, in order, each failing with a message that says what to change:

1. **syntax** - the source parses;
2. **imports** - only ``numpy`` and ``math`` (and ``langmarl.p2p`` for the ABC) are imported,
   and no escape hatches (``exec``, ``eval``, ``open``, ``getattr``, ``__import__``, private
   attributes, numpy's file and native-code functions such as ``np.savetxt``);
3. **structure** - it defines a ``RewardFunction`` subclass or ``reward_fn``;
4. **runtime** - in the shared sandbox (killable timeout, memory limit), the reward runs on
   real transitions of the target env and returns finite floats and only declared terms.
"""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from langmarl.sandbox import SandboxLimits, run_python

Stage = Literal["syntax", "imports", "structure", "runtime", "ok"]
ALLOWED_IMPORTS = frozenset({"numpy", "math", "langmarl.p2p", "langmarl.p2p.reward", "__future__"})
FORBIDDEN_NAMES = frozenset(
    {"exec", "eval", "compile", "open", "__import__", "globals", "locals", "vars", "input"}
    | {"breakpoint", "getattr", "setattr", "delattr", "memoryview", "__builtins__"}
)
FORBIDDEN_ATTRIBUTES = frozenset(
    {"save", "savez", "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt"}
    | {"fromfile", "tofile", "memmap", "DataSource", "ctypeslib", "ctypes", "f2py"}
    | {"distutils", "testing", "lib", "show_config", "show_runtime"}
)
"""numpy's file, native-code and introspection entry points: no reward needs them."""
HARNESS = Path(__file__).with_name("_harness.py")


class ValidationResult(BaseModel):
    """The outcome of :func:`validate_reward_code`."""

    ok: bool
    stage: Stage
    """The stage that failed, or "ok"."""
    errors: list[str] = Field(default_factory=list)
    terms: dict[str, str] = Field(default_factory=dict)
    latex: str = ""
    description: str = ""
    call_us: float | None = None
    """Mean microseconds per reward call in the runtime check."""

    def message(self) -> str:
        """All errors as one line, for prompts and logs."""
        return "; ".join(self.errors) or "ok"


def check_static(source: str) -> ValidationResult:
    """Syntax, imports and structure checks (no code runs)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return _fail(
            "syntax", f"syntax error on line {exc.lineno}: {exc.msg} ({(exc.text or '').strip()!r})"
        )
    problems = _import_problems(tree)
    if problems:
        return ValidationResult(ok=False, stage="imports", errors=problems)
    if not _defines_reward(tree):
        return _fail(
            "structure",
            "no reward defined: write `def reward_fn(obs, action, next_obs, info)` returning "
            "(total, {term: value}), or a class deriving from RewardFunction",
        )
    return ValidationResult(ok=True, stage="ok")


def _fail(stage: Stage, error: str) -> ValidationResult:
    return ValidationResult(ok=False, stage=stage, errors=[error])


def _import_problems(tree: ast.AST) -> list[str]:
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            problems.append(f"line {node.lineno}: `{node.id}` is not allowed in reward code")
            continue
        elif isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            problems.append(f"line {node.lineno}: dunder attribute `{node.attr}` is not allowed")
            continue
        elif isinstance(node, ast.Attribute) and (
            node.attr.startswith("_") or node.attr in FORBIDDEN_ATTRIBUTES
        ):
            problems.append(
                f"line {node.lineno}: attribute `{node.attr}` is not allowed in reward code "
                "(no private names, no file or native-code functions)"
            )
            continue
        else:
            continue
        for name in names:
            if name not in ALLOWED_IMPORTS:
                problems.append(
                    f"line {node.lineno}: import of {name!r} is not allowed; use only numpy "
                    f"(available as np) and math"
                )
    return problems


def code_problems(source: str) -> list[str]:
    """Syntax and import problems of any LLM-written snippet ([] when there are none)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"syntax error on line {exc.lineno}: {exc.msg}"]
    return _import_problems(tree)


def _defines_reward(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "reward_fn":
            return True
        if isinstance(node, ast.ClassDef) and any(
            getattr(base, "id", getattr(base, "attr", "")) == "RewardFunction"
            for base in node.bases
        ):
            return True
    return False


def sandbox_env() -> dict[str, str]:
    """Environment for sandboxed MuJoCo: EGL, and glfw loaded directly (its version probe
    starts a subprocess, which the sandbox refuses)."""
    env = {"MUJOCO_GL": "egl"}
    spec = importlib.util.find_spec("glfw")
    if spec and spec.origin:
        library = Path(spec.origin).parent / "x11" / "libglfw.so"
        if library.is_file():
            env["PYGLFW_LIBRARY"] = str(library)
    return env


def check_runtime(
    source: str, env_id: str, *, steps: int = 200, timeout_s: float = 30.0, memory_mb: int = 1024
) -> ValidationResult:
    """Run the reward on ``steps`` random transitions of ``env_id`` in the sandbox."""
    limits = SandboxLimits(timeout_s=timeout_s, memory_mb=memory_mb, extra_env=sandbox_env())
    result = run_python(
        HARNESS.read_text(encoding="utf-8"),
        limits=limits,
        files={"reward_fn.py": source},
        args=[env_id, str(steps)],
    )
    if result.timed_out:
        return _fail(
            "runtime",
            f"the reward did not finish {steps} steps within {timeout_s:.0f}s (an infinite "
            f"loop or very slow code): keep compute() to a few numpy operations",
        )
    lines = result.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        report = None
    if not isinstance(report, dict):
        reason = result.killed_reason or result.stderr.strip().splitlines()[-1:] or ["no output"]
        return _fail("runtime", f"the runtime check crashed: {reason}")
    if not report.get("ok"):
        return _fail("runtime", str(report.get("error")))
    return ValidationResult(
        ok=True,
        stage="ok",
        terms=report.get("terms", {}),
        latex=report.get("latex", ""),
        description=report.get("description", ""),
        call_us=report.get("call_us"),
    )


def validate_reward_code(
    source: str, env_id: str, *, steps: int = 200, timeout_s: float = 30.0
) -> ValidationResult:
    """Static checks, then the sandboxed runtime check on ``env_id``.

    Args:
        source: Reward source code.
        env_id: Gymnasium MuJoCo env id whose transitions the reward is tried on.
        steps: Random transitions to try.
        timeout_s: Wall-clock limit of the runtime check (kills infinite loops).
    """
    static = check_static(source)
    if not static.ok:
        return static
    return check_runtime(source, env_id, steps=steps, timeout_s=timeout_s)
