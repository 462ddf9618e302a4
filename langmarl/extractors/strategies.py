"""Extraction strategies: pure functions over text, and the strategy objects that wrap them.

Each function returns the extracted string, or ``None`` when the text holds nothing of that
shape. None of them raises on any input.
"""

from __future__ import annotations

import re

from langmarl.extractors.base import BaseExtractorStrategy

_ACTION_TAG = re.compile(r"<Action>\s*([^<\n]*?)\s*(?:</Action>|$)", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
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


def extract_fenced_code(text: str, language: str | None = "python") -> str | None:
    """The body of the last fenced code block, preferring blocks tagged ``language``.

    Untagged blocks count as ``language``; with ``language=None`` any block qualifies.
    """
    blocks = [(m.group(1).lower(), m.group(2)) for m in _FENCE.finditer(text)]
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
