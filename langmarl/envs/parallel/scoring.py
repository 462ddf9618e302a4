"""Scoring answers: extracting a sub-agent's answer and matching expected parts (pure)."""

from __future__ import annotations

import re

_ANSWER_LINE = re.compile(r"answer\s*[:=]\s*(?P<text>.+)", re.I)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_SEGMENT_SPLIT = re.compile(r"[\n;]+")


def extract_answer(reply: str) -> tuple[str, bool]:
    """``(answer, marked)``: the text after the last ``ANSWER:`` if there is one
    (``marked=True``), else the last non-empty line of ``reply``."""
    marked = _ANSWER_LINE.findall(reply)
    if marked:
        return marked[-1].strip(), True
    lines = [line.strip() for line in reply.splitlines() if line.strip()]
    return (lines[-1] if lines else ""), False


def normalize(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def matches(expected: str, candidate: str) -> bool:
    """Does ``candidate`` answer ``expected``?

    Numbers: the last number in ``candidate`` equals ``expected`` (so ``"3 + 4 = 7"``
    matches ``7`` but echoing the operands does not). Text: ``expected`` appears in
    ``candidate`` as whole words, ignoring case, punctuation and a plural ``s``.
    """
    if _NUMBER.fullmatch(expected.strip()):
        numbers = _NUMBER.findall(candidate)
        return bool(numbers) and float(numbers[-1]) == float(expected)
    want, have = normalize(expected), normalize(candidate)
    return bool(want) and re.search(rf"\b{re.escape(want)}s?\b", have) is not None


def score_parts(expected: list[str], final_answer: str) -> list[bool]:
    """For each expected part, whether some line (or ``;``-separated segment) of
    ``final_answer`` answers it."""
    segments = [s for s in _SEGMENT_SPLIT.split(final_answer) if s.strip()]
    return [any(matches(want, segment) for segment in segments) for want in expected]
