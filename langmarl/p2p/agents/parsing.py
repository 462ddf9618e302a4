"""Pull code, JSON and scores out of LLM replies (pure functions)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from langmarl.core.errors import ParseError
from langmarl.extractors import fenced_blocks, python_blocks

_SCORE = re.compile(r"score\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)\s*(%|/\s*10\b|/\s*100\b)?", re.I)


def extract_code(text: str, must_define: str) -> str:
    """The code block of ``text`` that defines ``must_define`` (a function or class name).

    Falls back to the first python block, then to the whole reply when it parses as Python.

    Raises:
        ParseError: No code in the reply.
    """
    code_blocks = [body.strip() for body in python_blocks(text, unclosed=True)]
    for body in code_blocks:
        if re.search(rf"\b(def|class)\s+{re.escape(must_define)}\b", body) or (
            must_define == "reward_fn" and "RewardFunction" in body
        ):
            return body
    if code_blocks:
        return code_blocks[0]
    stripped = text.strip()
    if f"def {must_define}" in stripped:
        start = stripped.index(f"def {must_define}")
        return stripped[start:]
    try:
        ast.parse(stripped)
    except SyntaxError:
        raise ParseError(f"a ```python block defining {must_define}", text) from None
    if not stripped:
        raise ParseError(f"a ```python block defining {must_define}", text)
    return stripped


def extract_json(text: str) -> dict[str, Any]:
    """The first ```json block (or bare ``{...}``) of ``text`` as a dict; {} when none parses."""
    candidates = [body for tag, body in fenced_blocks(text, unclosed=True) if tag == "json"]
    candidates += re.findall(r"\{[^{}]*\}", text)
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def parse_score(text: str) -> tuple[float, str]:
    """``(score in [0, 1], reason)`` from a ``SCORE: x`` / ``REASON: ...`` reply.

    Scores written as percentages or out of 10 are rescaled; values are clamped to [0, 1].

    Raises:
        ParseError: No score in the reply.
    """
    match = _SCORE.search(text)
    if match is None:
        raise ParseError("SCORE: <0..1>", text)
    value = float(match.group(1))
    scale = (match.group(2) or "").replace(" ", "")
    if scale in ("%", "/100") or (not scale and value > 10):
        value /= 100.0
    elif scale == "/10" or value > 1:
        value /= 10.0
    reason_match = re.search(r"reason\s*[:=]\s*(.+)", text, re.I)
    reason = reason_match.group(1).strip() if reason_match else text.strip()[:200]
    return min(1.0, max(0.0, value)), reason
