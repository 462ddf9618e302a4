"""The static allow-list of LLM-written code (stage 2 of :mod:`.validation`; it covers the
judges' and checks' code too, through :func:`code_problems`).

No code runs here: the source's AST is walked, and every import, name, attribute chain,
binding and string is held against the lists below. Each problem names the line and says
what to write instead. It is defence in depth, not the barrier: code that passes still runs
only confined (see :mod:`.validation`).
"""

from __future__ import annotations

import ast
import builtins
import math
from collections.abc import Iterator


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ALLOWED_IMPORTS: dict[str, frozenset[str] | None] = {
    "numpy": None,  # ``import numpy``; ``from numpy import x`` checks x against NUMPY_NAMES
    "math": None,
    "langmarl.p2p": frozenset({"RewardFunction"}),
    "langmarl.p2p.reward": frozenset({"RewardFunction"}),  # the path before issue 40
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


def import_problems(tree: ast.Module) -> list[str]:
    """Allow-list problems of a parsed module ([] when there are none)."""
    checker = _Checker(tree)
    checker.visit(tree)
    return _shadowing_problems(tree) + checker.problems


def code_problems(source: str) -> list[str]:
    """Syntax and allow-list problems of any LLM-written snippet ([] when there are none)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"syntax error on line {exc.lineno}: {exc.msg}"]
    return import_problems(tree)


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


def defines_reward(tree: ast.Module) -> bool:
    """Whether the module defines ``reward_fn`` or a ``RewardFunction`` subclass."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "reward_fn":
            return True
        if isinstance(node, ast.ClassDef) and any(
            getattr(base, "id", getattr(base, "attr", "")) == "RewardFunction"
            for base in node.bases
        ):
            return True
    return False
