"""The README's code blocks as examples, each classified by the marker on the line above it.

Every fenced block of README.md carries an HTML comment, invisible when rendered, on the line
before its opening fence:

    <!-- example: quick -->                 runs offline as written, well under a minute
    <!-- example: slow, ~9 min -->          runs offline as written, too long for the tests
    <!-- example: needs OPENAI_API_KEY -->  needs a key, a server or a run id filled in
    <!-- example: fragment -->              output, a file layout: nothing to run

``tests/test_readme_examples.py`` runs each quick one in a fresh directory (a reader may
jump to any section, so no block relies on another) and refuses a block without a marker, so
every new example has to say how it runs. A slow marker states the measured duration; a
needs marker says what is missing. The parser is line-based rather than the extractors'
``fenced_blocks`` (which reads LLM replies): README fences start a line, and the marker and
line number matter here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, cast, get_args

ExampleKind = Literal["quick", "slow", "needs", "fragment"]
KINDS: tuple[str, ...] = get_args(ExampleKind)

_FENCE = re.compile(r"^```\s*(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*example:\s*(\w+)\s*(?:,\s*)?(.*?)\s*-->\s*$")
_DURATION = re.compile(r"~\s*\d+(?:\.\d+)?\s*(?:s|min|h)\b")
_MARKER_HELP = (
    "put one of `<!-- example: quick -->`, `<!-- example: slow, ~N min -->`, "
    "`<!-- example: needs WHAT -->`, `<!-- example: fragment -->` on the line before the fence"
)


class ReadmeExampleError(ValueError):
    """A README code block without a valid marker; the message names its line and the fix."""


@dataclass(frozen=True)
class Example:
    """One fenced code block of the README.

    Attributes:
        line: 1-based line of the opening fence.
        language: The fence's tag (``bash``, ``python``, or ``""``).
        code: The block's body as written.
        kind: How it runs (see the module docstring).
        note: The rest of the marker: a slow block's duration, what a ``needs`` block needs.
    """

    line: int
    language: str
    code: str
    kind: ExampleKind
    note: str

    @property
    def name(self) -> str:
        """A short id for test reports, e.g. ``L180-bash``."""
        return f"L{self.line}-{self.language or 'text'}"


def parse_examples(text: str) -> list[Example]:
    """Every fenced block of a Markdown text with its marker, in document order.

    Raises:
        ReadmeExampleError: a block has no marker or a malformed one, a slow block states no
            duration, a ``needs`` block does not say what it needs, or a fence is not closed.
    """
    lines = text.splitlines()
    examples: list[Example] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ReadmeExampleError(f"line {index + 1}: this ``` fence is never closed")
        kind, note = _marker(lines[index - 1] if index else "", index + 1)
        body = "\n".join(lines[index + 1 : end]) + "\n"
        examples.append(Example(index + 1, fence.group(1), body, kind, note))
        index = end + 1
    return examples


def _marker(line: str, fence_line: int) -> tuple[ExampleKind, str]:
    """The kind and note of the marker ``line`` above the fence at ``fence_line``."""
    found = _MARKER.match(line.strip())
    if not found:
        raise ReadmeExampleError(f"line {fence_line}: the code block has no marker: {_MARKER_HELP}")
    kind, note = found.group(1), found.group(2)
    if kind not in KINDS:
        raise ReadmeExampleError(
            f"line {fence_line}: unknown example kind {kind!r}; use one of {', '.join(KINDS)}"
        )
    if kind == "slow" and not _DURATION.search(note):
        raise ReadmeExampleError(
            f"line {fence_line}: a slow example states its measured duration, e.g. "
            f"`<!-- example: slow, ~3 min -->` (got {note!r})"
        )
    if kind == "needs" and not note:
        raise ReadmeExampleError(
            f"line {fence_line}: say what the example needs, e.g. "
            "`<!-- example: needs OPENAI_API_KEY -->` or `<!-- example: needs a server -->`"
        )
    return cast(ExampleKind, kind), note
