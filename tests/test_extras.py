"""pyproject's dependencies match langmarl's imports.

Every third-party module langmarl imports (``import x``, ``from x import y``, and the
string imports ``import_module("x")`` / ``_require("x", ...)`` of optional backends) maps,
through ``importlib.metadata.packages_distributions()``, to a distribution that the base
dependencies or an extra declare — directly, or as the extra of a declared requirement
(``gymnasium[mujoco]`` brings ``mujoco``). Every base dependency is imported somewhere,
``all`` holds nothing that nothing imports (bar the documented ``RUNTIME_ONLY``), and every
``MissingDependencyError(package, extra, ...)`` names an extra that really provides
``package``.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata as metadata
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import langmarl

ROOT = Path(langmarl.__file__).parent
PYPROJECT = ROOT.parent / "pyproject.toml"

RUNTIME_ONLY = {
    "gguf": "transformers reads the embedded model's GGUF file with it (gguf_file=...)",
    "tensorboard": "the viewer of the event files tensorboardX writes (tensorboard --logdir)",
}
"""Distributions of ``all`` used without an import in langmarl, and why."""

NOT_IN_ALL = {
    "isaaclab": "IsaacLab needs Linux, an NVIDIA GPU and Isaac Sim (from pypi.nvidia.com); "
    "`all` must install on any machine",
    "vllm": "vLLM's rollout engine needs a GPU (and pins its own torch); `all` must install on "
    "any machine",
}
"""Extras left out of ``all``, and why. Their packages are not installed here either."""
NOT_INSTALLED = {"isaaclab": "isaaclab", "isaaclab_tasks": "isaaclab", "vllm": "vllm"}
"""Modules of the ``NOT_IN_ALL`` extras that langmarl imports -> the distribution that ships
them (``isaaclab[all]`` brings ``isaaclab_tasks``); checked by name, as nothing is installed."""

STRING_IMPORTERS = ("import_module", "_require")
"""Calls whose first (string) argument is a module imported at run time."""


def _imported_modules(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if name in STRING_IMPORTERS and isinstance(first, ast.Constant):
                found.add(str(first.value))
    return found


@functools.cache
def imports() -> dict[str, set[str]]:
    """Top-level third-party module → the langmarl files importing it."""
    found: dict[str, set[str]] = {}
    for file in sorted(ROOT.rglob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for module in _imported_modules(tree):
            top = module.split(".")[0]
            if top not in sys.stdlib_module_names and top not in ("langmarl", "__future__"):
                found.setdefault(top, set()).add(str(file.relative_to(ROOT)))
    return found


@functools.cache
def _providers() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def distributions_of(module: str) -> set[str]:
    """The installed distributions providing a top-level module (several for a namespace
    such as ``mujoco``; any one of them declared is enough)."""
    providers = _providers()
    if module not in providers and module in NOT_INSTALLED:
        return {NOT_INSTALLED[module]}
    assert module in providers, f"{module!r} is imported by langmarl but not installed"
    return {canonicalize_name(d) for d in providers[module]}


def imported_distributions() -> set[str]:
    return set().union(*(distributions_of(m) for m in imports()))


@functools.cache
def project() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]


def _provided(requirement: str, with_extras: bool) -> set[str]:
    """Distributions a requirement declares: the package itself and, ``with_extras``, what
    its extras (``pkg[extra]``) make the installed ``pkg`` require."""
    req = Requirement(requirement)
    if req.name == "langmarl":
        return set().union(*(extra_closure(extra, with_extras) for extra in req.extras))
    names = {canonicalize_name(req.name)}
    for extra in req.extras if with_extras else ():
        for line in metadata.requires(req.name) or []:
            sub = Requirement(line)
            if sub.marker is not None and sub.marker.evaluate({"extra": extra}):
                names.add(canonicalize_name(sub.name))
    return names


def extra_closure(extra: str, with_extras: bool = True) -> set[str]:
    """Every distribution the extra declares (``langmarl[...]`` references followed)."""
    requirements = project()["optional-dependencies"][extra]
    return set().union(*(_provided(r, with_extras) for r in requirements))


def base_dependencies() -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in project()["dependencies"]}


def test_every_import_is_declared_by_the_base_or_an_extra() -> None:
    extras = set(project()["optional-dependencies"]) - {"dev"}  # dev: the tests' tools
    declared = set().union(base_dependencies(), *(extra_closure(e) for e in extras))
    undeclared = {
        module: sorted(files)
        for module, files in imports().items()
        if not distributions_of(module) & declared
    }
    assert undeclared == {}, "declare these in pyproject.toml (an extra if optional)"


def test_every_base_dependency_is_imported() -> None:
    assert sorted(base_dependencies() - imported_distributions()) == []


def test_all_holds_nothing_unused() -> None:
    named = extra_closure("all", with_extras=False)
    unused = named - imported_distributions() - set(RUNTIME_ONLY)
    assert sorted(unused) == [], "drop them from their extra, or say in RUNTIME_ONLY why"


def test_the_optional_extras_are_all_in_all() -> None:
    extras = set(project()["optional-dependencies"]) - {"all", "dev", "docs"}  # docs: in dev
    extras -= set(NOT_IN_ALL)
    everything = extra_closure("all")
    assert {e for e in extras if not extra_closure(e) <= everything} == set()


def _missing_dependency_hints() -> list[tuple[str, str, str]]:
    """``(file, package, extra)`` of every MissingDependencyError raised with literals."""
    hints = []
    for file in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
                "MissingDependencyError", "_require"
            )):  # fmt: skip
                continue
            args = node.args[:2]
            if len(args) == 2 and all(isinstance(a, ast.Constant) for a in args):
                package, extra = (a.value for a in args)  # type: ignore[attr-defined]
                if extra is not None:
                    hints.append((str(file.relative_to(ROOT)), str(package), str(extra)))
    return hints


def test_every_install_hint_names_an_extra_that_provides_the_package() -> None:
    hints = _missing_dependency_hints()
    assert len(hints) >= 10  # the walk finds them
    providers = _providers()
    wrong = []
    for file, package, extra in hints:
        name = package.split("[")[0]  # a distribution, or a module for _require
        dists = {canonicalize_name(d) for d in providers.get(name, [name])}
        if extra not in project()["optional-dependencies"] or not dists & extra_closure(extra):
            wrong.append((file, package, extra))
    assert wrong == []
