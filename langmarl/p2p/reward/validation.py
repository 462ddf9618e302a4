"""Validate LLM-written reward code before it is trained on.

Checks, in order, each failing with a message that says what to change:

1. **syntax** - the source parses;
2. **imports** (the static allow-list of :mod:`.allow_list`, which covers LLM-written
   judge code too) - only ``numpy`` and ``math`` (and ``RewardFunction`` from
   ``langmarl.p2p``) are imported, without ``*``; every name the code uses is defined in it,
   one of those modules, or an allowed builtin (``SAFE_BUILTINS``: no ``exec``, ``eval``,
   ``open``, ``getattr``, ``vars``, ``__import__`` ...); an attribute chain that starts at a
   module may only name allowed members (``NUMPY_NAMES``, ``np.linalg``'s ``LINALG_NAMES``,
   ``math``'s public functions), so ``np.ma.core.builtins.exec``, ``np.lib``, ``np.load``
   and ``np.ctypeslib`` are refused whatever follows; no attribute anywhere may be private
   (``_x``), a dunder, or one of ``FORBIDDEN_ATTRIBUTES`` (``builtins``, ``exec``, ``os``,
   ``tofile``, ``gi_frame``, ``f_globals`` ...); strings (but docstrings) may not hold
   ``__``;
3. **structure** - it defines a ``RewardFunction`` subclass or ``reward_fn``;
4. **runtime** - in the shared sandbox (killable timeout, memory limit), the reward runs on
   real transitions of the target env and returns finite floats and only declared terms. It
   runs in a child process of the check, which judges its answers and alone decides the
   exit code; a report counts only with exit 0, so a reward cannot print its own verdict.

The static check is defence in depth, not the barrier: code that passes it still runs only
in confined processes (the runtime check in the sandbox, training in the executor's
confinement, see :mod:`langmarl.sandbox.confine`), so a reward that hides an attack behind
``try``/``except`` and passes the runtime check is contained just as well when trained.
"""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from langmarl.p2p.reward.allow_list import defines_reward, import_problems
from langmarl.p2p.session.contracts import RewardOrigin, RewardSpec
from langmarl.sandbox import SandboxLimits, run_python

Stage = Literal["syntax", "imports", "structure", "runtime", "ok"]


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
    problems = import_problems(tree)
    if problems:
        return ValidationResult(ok=False, stage="imports", errors=problems)
    if not defines_reward(tree):
        return _fail(
            "structure",
            "no reward defined: write `def reward_fn(obs, action, next_obs, info)` returning "
            "(total, {term: value}), or a class deriving from RewardFunction",
        )
    return ValidationResult(ok=True, stage="ok")


def _fail(stage: Stage, error: str) -> ValidationResult:
    return ValidationResult(ok=False, stage=stage, errors=[error])


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
    if result.returncode != 0:  # a report the harness's judge did not stand behind
        return _fail(
            "runtime",
            f"the runtime check ended with exit code {result.returncode} after an 'ok' report "
            "it did not make (reward code printing a verdict of its own?): return the reward "
            "from compute() and print nothing",
        )
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


def reward_spec(validation: ValidationResult, origin: RewardOrigin) -> RewardSpec:
    """What a validated reward claims to compute, and who wrote it."""
    return RewardSpec(
        latex=validation.latex,
        terms=validation.terms,
        description=validation.description,
        origin=origin,
    )
