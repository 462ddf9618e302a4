"""MkDocs hook: the CLI reference, generated from the Typer app each time the site is built.

``docs/cli.md`` holds the marker ``<!-- cli-reference -->``; this hook replaces it with one
section per command of ``langmarl.cli.build_app()``: its help text, its usage line and a
table of its arguments and options (names, types, defaults and help as ``--help`` shows
them). It walks the Click command tree that Typer builds, so nothing here repeats a default
or a help text: the CLI modules are the one place for them.

Why a hook rather than mkdocs-typer's ``::: mkdocs-typer`` directive: that directive imports a
module-level ``typer.Typer`` object, and ``langmarl.cli`` builds its app in a function
(``build_app()``) so that importing the package registers nothing. The hook lives outside
the ``langmarl`` package (the package's layers forbid ``testing`` or ``core`` importing
``cli``) and is excluded from the site's files by ``mkdocs.yml``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

MARKER = "<!-- cli-reference -->"
PROG = "langmarl"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace the marker with the generated reference (other pages pass unchanged)."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())


def cli_reference() -> str:
    """The Markdown of every command of the ``langmarl`` app, root first, in registration order."""
    from langmarl.cli import build_app

    root = typer.main.get_command(build_app())
    return "\n".join(_command_docs(root, [PROG], None)).rstrip("\n") + "\n"


def _command_docs(command: Any, path: list[str], parent: Any) -> Iterator[str]:
    """Typer ships its own copy of Click (``typer._click``), so commands, parameters and
    contexts are used through their attributes here, not checked against ``click`` classes."""
    ctx = typer.Context(command, info_name=path[-1], parent=parent)
    yield f"### `{' '.join(path)}`"
    yield ""
    if command.help:
        yield from _plain(command.help)
        yield ""
    yield "```text"
    yield " ".join([*path, *_usage_pieces(command, ctx)])
    yield "```"
    yield ""
    found = [_row(param, ctx) for param in command.get_params(ctx) if not _hidden(param)]
    rows = [row for row in found if row is not None]
    if rows:
        yield "| argument or option | what it does |"
        yield "|---|---|"
        yield from rows
        yield ""
    if hasattr(command, "list_commands"):
        names = command.list_commands(ctx)
        if names:
            links = ", ".join(f"[`{name}`](#{'-'.join([*path, name])})" for name in names)
            yield f"Sub-commands: {links}."
            yield ""
        for name in names:
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _command_docs(sub, [*path, name], ctx)


def _usage_pieces(command: Any, ctx: Any) -> list[str]:
    """``[OPTIONS]``, then each argument by name (optional ones in brackets, repeatable ones
    with ``...``), then ``COMMAND [ARGS]...`` for a group."""
    pieces = ["[OPTIONS]"]
    for param in command.get_params(ctx):
        if param.param_type_name != "argument" or _hidden(param):
            continue
        name = (param.name or "").upper() + ("..." if param.nargs == -1 else "")
        pieces.append(name if param.required else f"[{name}]")
    if hasattr(command, "list_commands"):
        pieces.append("COMMAND [ARGS]...")
    return pieces


def _hidden(param: Any) -> bool:
    return bool(getattr(param, "hidden", False))


def _row(param: Any, ctx: Any) -> str | None:
    record = param.get_help_record(ctx)
    if record is None:
        return None
    names, help_text = record
    if param.param_type_name == "argument":
        names = names.split(" ")[0].upper()  # Typer's record reads "config <str>"
        help_text = help_text or ""
    names = names.replace("|", "\\|")  # a Choice's metavar, e.g. [local|ray]
    return f"| `{names}` | {_escape(' '.join(help_text.split()))} |"


def _escape(text: str) -> str:
    """Help text as literal Markdown: ``<runs_dir>`` is not an HTML tag, ``step-*`` no
    emphasis, and a ``|`` does not end a table cell."""
    for char, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        text = text.replace(char, escaped)
    for char in "\\`*_[]|":
        text = text.replace(char, "\\" + char)
    return text


def _plain(text: str) -> list[str]:
    """Help text as Markdown paragraphs (Click's ``\\b`` no-rewrap markers dropped)."""
    return [_escape(line.rstrip()) for line in text.replace("\b", "").strip().splitlines()]
