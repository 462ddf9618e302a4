"""The package's imports: no cycles, and no layer imports a layer above it.

Every ``import`` counts, at module level and inside functions (a function-level import is
still a dependency; it only hides a cycle), except those under ``if TYPE_CHECKING:``.
A string entry point ``"langmarl.x.y:attr"`` counts too (it is an import the reader cannot
see) for the layer order, not for cycles: it loads when asked, so it cannot make an import
cycle. The registries (``REGISTRIES``) are where such strings are the point — a name mapped
to the module that implements it, as Gymnasium's ``register`` does — so their strings need
only resolve (``test_every_entry_point_resolves``). The packages' ``_lazy`` tables name
modules without ``:attr`` and are not read.

The layers, lowest first (docs/architecture.md, "Layers", says the same in one line).
A module may import its own layer and the layers below it; within a layer only cycles are
forbidden.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import langmarl

ROOT = Path(langmarl.__file__).parent
PACKAGE = "langmarl"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # the errors, records, files and ABCs everything uses; the root package (its lazy
    # table and __version__) loads nothing else
    ("core", ("langmarl", "langmarl._lazy", "langmarl.core")),
    # need only core: LLM configs and clients, the confinement, PARL math, experiment
    # trackers, the env registry (names and lazy strings only, so config can ask it for
    # config classes)
    (
        "base",
        (
            "langmarl.llm",
            "langmarl.sandbox",
            "langmarl.rewards",
            "langmarl.tracking",
            "langmarl.envs.registry",
        ),
    ),
    # run configs (they hold LLMConfigs) and the scripted test doubles
    ("config", ("langmarl.config", "langmarl.testing")),
    # what environments are made of
    ("tasks", ("langmarl.extractors", "langmarl.verifiers", "langmarl.datasets")),
    ("envs", ("langmarl.envs",)),
    # language space: critic, optimizer, formatter
    ("textgrad", ("langmarl.textgrad",)),
    ("store", ("langmarl.store",)),
    # jobs: training commands as local processes or Ray tasks; a kind's command and config
    # check come from the store's kinds, so the spaces build on jobs, never the reverse
    ("jobs", ("langmarl.jobs",)),
    ("trainer", ("langmarl.trainer",)),
    # the training spaces (parl builds on magrpo's generation and the language trainer)
    ("spaces", ("langmarl.magrpo", "langmarl.p2p", "langmarl.parl")),
    ("plots", ("langmarl.plots",)),
    ("api", ("langmarl.api",)),
    # the dashboard's API over the runs directory (reads runs through store/ and the entry
    # points each kind of run registers there)
    ("web", ("langmarl.web",)),
    ("cli", ("langmarl.cli", "langmarl.__main__")),  # `python -m langmarl` runs the CLI
]

# Upward imports still to fix, each with the issue that fixes it. Empty is the goal; an
# entry whose import is gone makes the test fail, so the list cannot go stale.
# Entries look like ("langmarl.x.y", "langmarl.z"): "issue N: what moves where".
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}

ENTRY_POINT = re.compile(r"^(langmarl(?:\.\w+)+):([A-Za-z_]\w*)(?:\.\w+)*$")
"""A string entry point: ``"langmarl.x.y:attr"`` (``attr`` may go on, ``Class.method``)."""
REGISTRIES: dict[str, str] = {
    "langmarl.envs.registry": "environment ids -> their env and config classes (make(id))",
    "langmarl.store.kinds": "kinds of run -> their readers, checks, plots and evaluations",
}
"""Modules whose string entry points register names, resolved by whoever asks for a name;
they may name any layer. Everywhere else a string entry point obeys the layer order."""

SPACES = ("langmarl.magrpo", "langmarl.p2p", "langmarl.parl", "langmarl.trainer")
NEVER: list[tuple[str, tuple[str, ...], str]] = [
    # (importers, what they never import, why); type-only imports count here too
    ("langmarl.envs", SPACES, "an environment knows no trainer: bridges live on its side"),
    ("langmarl.web", SPACES, "the server reads runs through the store's contract"),
]
"""Rules beyond the layer order (issue 27). Importing the package root from inside the
package is never allowed either (``test_nothing_inside_imports_the_package_root``)."""
ALLOWED_NEVER: dict[tuple[str, str], str] = {}
"""Broken never-rules still to fix; an entry whose import is gone fails the test."""


def module_name(file: Path) -> str:
    parts = list(file.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
            if name == "TYPE_CHECKING":
                skip.update(id(inner) for sub in node.body for inner in ast.walk(sub))
    return skip


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join(package + ([base] if base else []))
        return [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return []


def entry_points(tree: ast.AST) -> list[tuple[str, str]]:
    """``(module, attr)`` of every string entry point in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = ENTRY_POINT.match(node.value)
            if match:
                found.append((match.group(1), match.group(2)))
    return found


@functools.cache
def _files() -> dict[str, Path]:
    return {module_name(f): f for f in sorted(ROOT.rglob("*.py"))}


@functools.cache
def import_graph(type_checking: bool = False, strings: bool = False) -> dict[str, set[str]]:
    """Module → the package's modules it imports (the deepest module each name names); with
    ``type_checking``, imports under ``if TYPE_CHECKING:`` count too; with ``strings``, the
    string entry points of every module but the registries."""
    files = _files()
    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, file in files.items():
        tree = ast.parse(file.read_text(encoding="utf-8"))
        skip = set() if type_checking else _type_checking_nodes(tree)
        named = entry_points(tree) if strings and module not in REGISTRIES else []
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            for target in _targets(node, module, file.name == "__init__.py"):
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != module and target.split(".")[0] == PACKAGE:
                    graph[module].add(target)
        graph[module] |= {target for target, _ in named if target != module}
    return graph


def layer_of(module: str) -> int:
    """Index in ``LAYERS`` of the longest prefix that names ``module``'s layer."""
    best, length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and len(prefix) > length:
                best, length = index, len(prefix)
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer() -> None:
    missing = [m for m in import_graph() if layer_of(m) < 0]
    assert missing == [], "add the new package to LAYERS (and to docs/architecture.md)"


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_no_upward_imports() -> None:
    graph = import_graph(strings=True)
    upward = {
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(module)
    }
    unexpected = sorted(upward - set(ALLOWED_UPWARD))
    names = [f"{m} ({LAYERS[layer_of(m)][0]}) -> {t} ({LAYERS[layer_of(t)][0]})"
             for m, t in unexpected]  # fmt: skip
    assert names == []
    assert sorted(set(ALLOWED_UPWARD) - upward) == [], "fixed: remove from ALLOWED_UPWARD"


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_never_rules() -> None:
    broken = {
        (module, target): why
        for importers, banned, why in NEVER
        for module, targets in import_graph(type_checking=True).items()
        if _under(module, (importers,))
        for target in targets
        if _under(target, banned)
    }
    unexpected = [f"{m} -> {t}: {why}" for (m, t), why in sorted(broken.items())
                  if (m, t) not in ALLOWED_NEVER]  # fmt: skip
    assert unexpected == []
    assert sorted(set(ALLOWED_NEVER) - set(broken)) == [], "fixed: remove from ALLOWED_NEVER"


def test_nothing_inside_imports_the_package_root() -> None:
    """The root is for users (its lazy table); a module that needs the version asks
    ``langmarl.core.version``."""
    graph = import_graph(type_checking=True)
    assert sorted(m for m, targets in graph.items() if PACKAGE in targets and m != PACKAGE) == []


def test_the_checker_sees_imports_inside_functions_not_type_checking_ones() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from langmarl.cli import app\n"
        "def f():\n    from langmarl.api import train\n    from . import sibling\n"
    )
    tree = ast.parse(source)
    skip = _type_checking_nodes(tree)
    found = {
        t
        for node in ast.walk(tree)
        if id(node) not in skip
        for t in _targets(node, "langmarl.store.local", is_package=False)
    }
    assert {"langmarl.api", "langmarl.store.sibling"} <= found
    assert not any(t.startswith("langmarl.cli") for t in found)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def test_every_entry_point_resolves() -> None:
    """A string entry point names a module of the package and a name defined at its top
    level (a module moved or a name renamed fails here, not when a user asks for it)."""
    files = _files()
    broken = []
    for module, file in files.items():
        for target, attr in entry_points(ast.parse(file.read_text(encoding="utf-8"))):
            if target not in files:
                broken.append(f"{module}: no module {target}")
            elif attr not in _top_level_names(ast.parse(files[target].read_text("utf-8"))):
                broken.append(f"{module}: {target} defines no {attr}")
    assert broken == []


def test_the_checker_reads_string_entry_points() -> None:
    tree = ast.parse('X = "langmarl.cli.app:main"\nY = "langmarl.p2p:Cls.method"\nZ = "a:b"')
    assert entry_points(tree) == [("langmarl.cli.app", "main"), ("langmarl.p2p", "Cls")]
    graph = import_graph(strings=True)
    assert all(
        target in graph[module]
        for module, file in _files().items()
        if module not in REGISTRIES
        for target, _ in entry_points(ast.parse(file.read_text(encoding="utf-8")))
        if target in _files() and target != module
    )
