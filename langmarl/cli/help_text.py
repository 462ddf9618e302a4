"""Help texts from docstrings, left for rich to wrap at the terminal's width.

A command's docstring is hard-wrapped at the source's line length (~90 columns); Typer keeps
the line breaks of every paragraph after the first, so rich wrapped each of those lines again
and ``--help`` broke mid-sentence at 80 columns. :func:`unwrap_help` joins each paragraph of
every command's help into one line, once, when the app is built; rich then wraps it at
spaces at whatever width the terminal has. reST literals (````x````) become Markdown-style
ones (```x```), as the one-line option helps write them.
"""

from __future__ import annotations

import inspect
import re

import typer

PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def unwrap_docstring(text: str) -> str:
    """``text`` (a docstring) with each paragraph on one line and reST literals as `x`.

    >>> unwrap_docstring("Run a session\\n    per row.\\n\\n    Writes ``bench.json``.")
    'Run a session per row.\\n\\nWrites `bench.json`.'
    """
    paragraphs = PARAGRAPH_BREAK.split(inspect.cleandoc(text))
    joined = (" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)
    return "\n\n".join(joined).replace("``", "`")


def unwrap_help(app: typer.Typer) -> None:
    """Give every command of ``app`` and of its groups, recursively, its help text
    (an explicit ``help=`` or else the docstring) with its paragraphs unwrapped."""
    for command in app.registered_commands:
        text = command.help if isinstance(command.help, str) else inspect.getdoc(command.callback)
        if text:
            command.help = unwrap_docstring(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            unwrap_help(group.typer_instance)
