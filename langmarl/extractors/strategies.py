"""Extraction strategies: pure functions over text, and the strategy objects that wrap them.

Each function returns the extracted string, or ``None`` when the text holds nothing of that
shape. None of them raises on any input.
"""

from __future__ import annotations

import re

from langmarl.extractors.base import BaseExtractorStrategy

_ACTION_TAG = re.compile(r"<Action>\s*([^<\n]*?)\s*(?:</Action>|$)", re.IGNORECASE | re.MULTILINE)
# A block runs from ``` plus an optional tag line to the next ```; a reply cut off by its
# token budget may leave the last block open, which ``unclosed=True`` accepts up to the end.
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_FENCE_OR_END = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = ("", "python", "py", "python3")
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")


def extract_action_tag(text: str) -> str | None:
    """The content after the last ``<Action>`` tag (up to ``</Action>`` or the line's end)."""
    found = [m.group(1).strip() for m in _ACTION_TAG.finditer(text)]
    found = [f for f in found if f]
    return found[-1] if found else None


def extract_boxed(text: str) -> str | None:
    r"""The content of the last ``\boxed{…}`` (or ``\fbox{…}``), with nested braces balanced."""
    starts = [m.end() for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text)]
    for start in reversed(starts):
        depth, index = 1, start
        while index < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            index += 1
        if depth == 0:
            content = text[start : index - 1].strip()
            if content:
                return content
    return None


def fenced_blocks(text: str, *, unclosed: bool = False) -> list[tuple[str, str]]:
    """Every fenced code block of ``text`` in order, as ``(tag, body)``.

    The one place that finds fenced code: every reader of code or JSON blocks goes through it.

    Args:
        text: An LLM reply.
        unclosed: Also take a last block whose closing fence is missing (a reply cut off by
            its token budget), up to the end of the text.

    Returns:
        ``(tag, body)`` pairs: ``tag`` lower-cased (``""`` when untagged), ``body`` as written.
    """
    pattern = _FENCE_OR_END if unclosed else _FENCE
    return [(m.group(1).lower(), m.group(2)) for m in pattern.finditer(text)]


def python_blocks(text: str, *, unclosed: bool = False) -> list[str]:
    """The bodies of the blocks tagged ``python``/``py``/``python3`` or untagged, in order."""
    return [body for tag, body in fenced_blocks(text, unclosed=unclosed) if tag in _PYTHON_TAGS]


def extract_fenced_code(text: str, language: str | None = "python") -> str | None:
    """The body of the last fenced code block, preferring blocks tagged ``language``.

    Untagged blocks count as ``language``; with ``language=None`` any block qualifies.
    """
    blocks = fenced_blocks(text)
    if language is not None:
        wanted = language.lower()
        tagged = [
            body for tag, body in blocks if tag in (wanted, "py" if wanted == "python" else wanted)
        ]
        untagged = [body for tag, body in blocks if not tag]
        blocks_in_order = tagged or untagged
    else:
        blocks_in_order = [body for _, body in blocks]
    bodies = [body.strip("\n") for body in blocks_in_order if body.strip()]
    return bodies[-1] if bodies else None


def extract_last_number(text: str) -> str | None:
    """The last number in the text, thousands separators removed (``"1,234.5"`` → ``"1234.5"``)."""
    found = _NUMBER.findall(text)
    return found[-1].replace(",", "") if found else None


class ActionTagStrategy(BaseExtractorStrategy):
    """``<Action> 5`` → ``"5"`` (the TicTacToe move format)."""

    async def extract(self, text: str) -> str | None:
        return extract_action_tag(text)


class BoxedStrategy(BaseExtractorStrategy):
    r"""``\boxed{42}`` → ``"42"``."""

    async def extract(self, text: str) -> str | None:
        return extract_boxed(text)


class FencedCodeStrategy(BaseExtractorStrategy):
    """A fenced code block's body; ``language`` picks tagged blocks (default python)."""

    def __init__(self, language: str | None = "python") -> None:
        self.language = language

    async def extract(self, text: str) -> str | None:
        return extract_fenced_code(text, self.language)


class LastNumberStrategy(BaseExtractorStrategy):
    """The last number in the text."""

    async def extract(self, text: str) -> str | None:
        return extract_last_number(text)


class StripStrategy(BaseExtractorStrategy):
    """The whole text, stripped; ``None`` if empty. A last-resort stage."""

    async def extract(self, text: str) -> str | None:
        return text.strip() or None
