"""Validate LLM-written reward code before it is trained on.

Checks, in order, each failing with a message that says what to change:

1. **syntax** - the source parses;
2. **imports** (the static allow-list; it covers LLM-written judge code too, through
   :func:`code_problems`) - only ``numpy`` and ``math`` (and ``RewardFunction`` from
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
import builtins
import importlib.util
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from langmarl.p2p.session.contracts import RewardOrigin, RewardSpec
from langmarl.sandbox import SandboxLimits, run_python

Stage = Literal["syntax", "imports", "structure", "runtime", "ok"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ALLOWED_IMPORTS: dict[str, frozenset[str] | None] = {
    "numpy": None,  # ``import numpy``; ``from numpy import x`` checks x against NUMPY_NAMES
    "math": None,
    "langmarl.p2p": frozenset({"RewardFunction"}),
    "langmarl.p2p.reward.function": frozenset({"RewardFunction"}),
    "__future__": frozenset({"annotations"}),
}
PROVIDED_NAMES = {"np": "numpy", "numpy": "numpy", "math": "math", "RewardFunction": ""}
"""Names the reward's namespace already holds (``p2p.reward.function.reward_namespace``)."""
NUMPY_NAMES = _words(
    """abs absolute add all allclose amax amin any append arange arccos arccosh arcsin arcsinh
    arctan arctan2 arctanh argmax argmin argsort argwhere around array array_equal array_split
    asarray atleast_1d atleast_2d average bincount bool_ cbrt ceil clip column_stack
    concatenate convolve copy copysign corrcoef correlate cos cosh count_nonzero cov cross
    cumprod cumsum deg2rad degrees diag diff digitize divide dot dstack dtype e einsum empty
    empty_like equal exp exp2 expand_dims expm1 eye fabs flatnonzero flip fliplr flipud
    float16 float32 float64 floating floor floor_divide fmax fmin fmod full full_like gradient
    greater greater_equal heaviside histogram hstack hypot identity inf int16 int32 int64 int8
    int_ integer interp isclose isfinite isinf isnan isscalar less less_equal linalg linspace
    log log10 log1p log2 logaddexp logical_and logical_not logical_or logical_xor max maximum
    mean median meshgrid min minimum mod moveaxis multiply nan nan_to_num nanmax nanmean
    nanmedian nanmin nanstd nansum ndarray ndim negative newaxis nonzero not_equal number ones
    ones_like outer percentile pi polyfit polyval power prod ptp quantile rad2deg radians
    ravel reciprocal remainder repeat reshape rint roll rot90 round searchsorted shape sign
    signbit sin sinc sinh size sort split sqrt square squeeze stack std subtract sum swapaxes
    take tan tanh tile trace transpose trapezoid tril triu true_divide trunc uint8 unique
    unwrap var vstack where zeros zeros_like"""
)
"""numpy's math: the only ``np.<name>`` reward code may use (no submodule but ``linalg``, no
file, native-code, printing or introspection function)."""
LINALG_NAMES = _words(
    "norm det inv pinv solve eig eigh eigvals eigvalsh svd matrix_rank cond lstsq qr "
    "cholesky slogdet multi_dot"
)
MODULE_MEMBERS = {
    "numpy": NUMPY_NAMES,
    "numpy.linalg": LINALG_NAMES,
    "math": frozenset(name for name in dir(math) if not name.startswith("_")),
}
SAFE_BUILTINS = _words(
    """abs all any bool callable chr complex dict divmod enumerate filter float format frozenset
    hash int isinstance issubclass iter len list map max min next ord pow print property range
    repr reversed round set slice sorted staticmethod classmethod str sum super tuple zip
    Exception ArithmeticError AssertionError FloatingPointError IndexError KeyError
    LookupError NotImplementedError OverflowError RuntimeError StopIteration TypeError
    ValueError ZeroDivisionError NotImplemented Ellipsis"""
)
"""The builtins reward code may name (``exec``, ``eval``, ``open``, ``getattr``, ``vars``,
``type``, ``object``, ``__import__`` ... are not among them)."""
BUILTIN_NAMES = frozenset(dir(builtins))
"""Every builtin; those outside :data:`SAFE_BUILTINS` may not even be bound."""
FORBIDDEN_ATTRIBUTES = _words(
    """builtins exec eval compile open system popen getattr setattr delattr globals locals vars
    sys os ctypes ctypeslib subprocess socket importlib import_module loader spec modules
    save savez savez_compressed savetxt load loadtxt genfromtxt fromfile tofile dump dumps
    memmap DataSource f2py distutils testing lib ma core show_config show_runtime
    gi_frame gi_code gi_yieldfrom cr_frame cr_code cr_await ag_frame ag_code f_back f_globals
    f_locals f_builtins f_code f_trace tb_frame tb_next co_code co_consts func_globals mro
    with_traceback
    storage untyped_storage typed_storage from_file from_buffer share_memory_ is_shared
    data_ptr pin_memory set_ cuda to_dlpack from_dlpack numpy hub jit library ops classes
    utils cpp_extension"""
)
"""Attributes refused on any object: escape hatches, numpy's file and native-code entry
points, torch's storage, shared-memory, native-library and file entry points (a batched
reward's tensors: ``obs.untyped_storage().from_file(path)`` reads a file), and the
frame/code/traceback attributes that reach other scopes' globals."""
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


def _import_problems(tree: ast.Module) -> list[str]:
    checker = _Checker(tree)
    checker.visit(tree)
    return _shadowing_problems(tree) + checker.problems


def code_problems(source: str) -> list[str]:
    """Syntax and allow-list problems of any LLM-written snippet ([] when there are none)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"syntax error on line {exc.lineno}: {exc.msg}"]
    return _import_problems(tree)


class _Checker(ast.NodeVisitor):
    """Collects allow-list problems (see the module docstring), one per offending node."""

    def __init__(self, tree: ast.Module) -> None:
        self.problems: list[str] = []
        self.modules = {k: v for k, v in PROVIDED_NAMES.items() if v}
        self.bound = _bound_names(tree)
        self.docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }

    def _refuse(self, node: ast.AST, text: str) -> None:
        self.problems.append(f"line {getattr(node, 'lineno', '?')}: {text}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in ("numpy", "math"):
                self._refuse_import(node, alias.name)
            else:
                self.modules[alias.asname or alias.name] = alias.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module not in ALLOWED_IMPORTS or node.level:
            self._refuse_import(node, module)
            return
        allowed = ALLOWED_IMPORTS[module] or MODULE_MEMBERS[module]
        for alias in node.names:
            if alias.name not in allowed:
                self._refuse(
                    node,
                    f"`from {module} import {alias.name}` is not allowed in reward code "
                    "(no `*`; numpy's math functions, math's functions, RewardFunction only)",
                )
            elif f"{module}.{alias.name}" in MODULE_MEMBERS:
                self.modules[alias.asname or alias.name] = f"{module}.{alias.name}"

    def _refuse_import(self, node: ast.AST, name: str) -> None:
        self._refuse(
            node, f"import of {name!r} is not allowed; use only numpy (available as np) and math"
        )

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if name in self.modules:  # a module's own name is visited only outside `np.<name>`
            self._refuse(
                node,
                f"module `{name}` may only be used as `{name}.<function>` (not stored, passed "
                "or aliased)",
            )
        elif name.startswith("__") or name not in self.bound | set(PROVIDED_NAMES) | SAFE_BUILTINS:
            self._refuse(
                node,
                f"`{name}` is not allowed in reward code: use names you define, np, math and "
                "plain builtins (no exec, eval, open, getattr, vars, globals, __import__)",
            )

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "__" in node.value and id(node) not in self.docstrings:
            self._refuse(node, "strings holding `__` (dunder names) are not allowed")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parts: list[str] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            parts.insert(0, base.attr)
            base = base.value
        dunder = [p for p in parts if p.startswith("__")]
        on_module = isinstance(base, ast.Name) and base.id in self.modules
        if on_module and not isinstance(node.ctx, ast.Load):
            self._refuse(node, f"assigning to `{ast.unparse(node)}` is not allowed")
        elif dunder:
            self._refuse(node, f"dunder attribute `{dunder[0]}` is not allowed")
        elif reason := self._chain_problem(base, parts):
            self._refuse(node, reason)
        if not isinstance(base, ast.Name) or base.id not in self.modules:
            self.visit(base)

    def _chain_problem(self, base: ast.expr, parts: list[str]) -> str | None:
        bad = [p for p in parts if p.startswith("_") or p in FORBIDDEN_ATTRIBUTES]
        chain = ".".join([base.id if isinstance(base, ast.Name) else "…", *parts])
        if isinstance(base, ast.Name) and base.id in self.modules:
            module: str | None = self.modules[base.id]
            for index, part in enumerate(parts):
                if module is None:
                    break
                if part not in MODULE_MEMBERS[module]:
                    prefix = ".".join([base.id, *parts[: index + 1]])
                    reaches = (
                        f"; `{'`, `'.join(bad)}` reach builtins, files or native code"
                        if bad
                        else ""
                    )
                    return (
                        f"`{chain}` is not allowed in reward code: `{prefix}` is not one of "
                        f"the allowed {module} names (reward code may use numpy's and math's "
                        f"math functions, not submodules, file, native-code or introspection "
                        f"functions){reaches}"
                    )
                child = f"{module}.{part}"
                module = child if child in MODULE_MEMBERS else None
            if module is not None:
                return (
                    f"`{chain}` is a module: use its functions (`{chain}.norm(x)`), not the module"
                )
        if bad:
            return (
                f"attribute `{bad[0]}` is not allowed in reward code (`{chain}`: no private "
                "names, no file, native-code, builtins or frame access)"
            )
        return None


def _bindings(tree: ast.Module) -> Iterator[tuple[ast.AST, str]]:
    """Every (node, name) by which the code itself binds a name, in any scope (assignments,
    defs, args, imports, ``except … as``, patterns). ``global``/``nonlocal`` bind nothing:
    they only say where a name lives."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            yield node, node.id
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node, node.name
        elif isinstance(node, ast.arg):
            yield node, node.arg
        elif isinstance(node, ast.alias):
            yield node, (node.asname or node.name).split(".")[0]
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            yield node, node.name
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node, node.rest


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the code itself binds, in any scope."""
    return {name for _, name in _bindings(tree)}


def _shadowing_problems(tree: ast.Module) -> list[str]:
    """A binding of a builtin reward code may not name (``for eval in []``, ``except E as
    open``): binding it in one scope would let another scope's use pass the check while it
    still reaches the real builtin there."""
    return [
        f"line {getattr(node, 'lineno', '?')}: `{name}` may not be bound in reward code: it "
        "is a Python builtin reward code may not use; pick another name"
        for node, name in _bindings(tree)
        if name.startswith("__") or (name in BUILTIN_NAMES and name not in SAFE_BUILTINS)
    ]


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
