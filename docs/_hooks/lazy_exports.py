"""Griffe extension: the public names of langmarl's lazy packages, for the API reference.

A lazy package (``langmarl/_lazy.py``) lists its public names once, in a ``_NAMES`` table of
name -> defining module, and sets ``__all__ = sorted(_NAMES)``; the imports that type
checkers see sit under ``if TYPE_CHECKING:``. Griffe reads code without running it, so it
cannot evaluate ``sorted(_NAMES)`` and would treat every name as a private import. This
extension reads the table's keys (a literal dict) as the module's exports, so mkdocstrings
documents exactly the names the package serves, each from the module that defines it.
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
        names = ast.literal_eval(str(table.value))
        mod.exports = sorted(names)
