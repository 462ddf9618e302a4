"""Griffe extension: the public names of langmarl's lazy packages, for the API reference.

A lazy package (``langmarl/_lazy.py``) lists its public names once, in a ``_NAMES`` table of
name -> defining module, and sets ``__all__ = sorted(_NAMES)``; the imports that type
checkers see sit under ``if TYPE_CHECKING:``. Griffe reads code without running it, so it
cannot evaluate ``sorted(_NAMES)`` and would treat every name as a private import. This
extension reads the table's keys as the module's exports, so mkdocstrings documents exactly
the names the package serves, each from the module that defines it. The table is a literal
dict, or a comprehension over a literal tuple of names (``{name: "module" for name in (...)}``,
when they all come from one module); any other table is left to griffe, never a failed build.
"""

from __future__ import annotations

import ast
from typing import Any

import griffe

TABLE = "_NAMES"


class LazyExports(griffe.Extension):
    """Set ``__all__`` of a module whose ``__all__`` is ``sorted(_NAMES)`` to the table's keys."""

    def on_module_members(
        self, *, node: Any, mod: griffe.Module, agent: Any, **kwargs: Any
    ) -> None:
        table = mod.members.get(TABLE)
        declared = mod.members.get("__all__")
        if not (isinstance(table, griffe.Attribute) and isinstance(declared, griffe.Attribute)):
            return
        if str(declared.value).replace(" ", "") != f"sorted({TABLE})":
            return
        names = table_names(str(table.value))
        if names is not None:
            mod.exports = sorted(names)


def table_names(source: str) -> list[str] | None:
    """The keys of a ``_NAMES`` table written as ``source``, or ``None`` if it is neither a
    literal dict nor a comprehension keyed by its loop variable over a literal sequence."""
    try:
        table = ast.parse(source, mode="eval").body
        if isinstance(table, ast.DictComp) and len(table.generators) == 1:
            loop = table.generators[0]
            keyed = isinstance(table.key, ast.Name) and isinstance(loop.target, ast.Name)
            if keyed and table.key.id == loop.target.id and not loop.ifs:
                return [str(name) for name in ast.literal_eval(loop.iter)]
            return None
        return [str(name) for name in ast.literal_eval(table)]
    except (SyntaxError, ValueError):
        return None
