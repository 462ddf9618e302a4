"""Griffe extension: Sphinx cross-reference roles in docstrings, shown as code in the API pages.

langmarl's docstrings name other objects the Sphinx way (``:meth:`act```,
``:class:`~langmarl.store.RunDir```), which reads well in an editor and in ``help()``. The API
reference renders docstrings as Markdown (mkdocstrings, Google style), where a role is no
syntax: the page would show ``:meth:`` glued to a code span. Before any docstring is parsed,
this extension rewrites each role to what Sphinx would display, in code style:

* ``:meth:`act``` → ``act``; ``:py:func:`f``` the same (the domain prefix is dropped);
* ``:class:`~langmarl.store.RunDir``` → ``RunDir`` (``~``: the last part only, as Sphinx);
* ``:func:`!name``` → ``name`` (``!``: no link, same text);
* ``:attr:`the title <target>``` → ``the title``.

Why text and not links: many roles name a relative target (``:meth:`act``` inside its class)
that mkdocstrings' cross-references cannot resolve, and every unresolved reference fails the
strict build. The docstrings stay the one source; nothing is rewritten on disk.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(
    r":(?:py:)?(?:meth|func|class|mod|attr|data|exc|obj|const|type|ref|term):"
    r"`(?P<target>[^`]{1,200})`"
)
"""One Sphinx role with its target, e.g. ``:class:`~langmarl.store.RunDir``` (a long target
may be wrapped onto the docstring's next line)."""


def shown(target: str) -> str:
    """What Sphinx displays for a role's ``target`` (wrapped lines joined again)."""
    titled = re.fullmatch(r"(?P<title>.+?)\s*<[^<>]+>", target, re.DOTALL)
    if titled:
        return " ".join(titled.group("title").split())
    target = "".join(target.split())
    if target.startswith("!"):
        return target[1:]
    if target.startswith("~"):
        return target[1:].rsplit(".", 1)[-1]
    return target


def plain_roles(text: str) -> str:
    """``text`` with every role replaced by its display text as a Markdown code span."""
    return ROLE.sub(lambda match: f"`{shown(match.group('target'))}`", text)


class SphinxRoles(griffe.Extension):
    """Rewrite the roles of every docstring griffe loads, before mkdocstrings parses it."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = plain_roles(obj.docstring.value)
