"""Tidying of LLM-written feedback before it reaches a policy.

Small models loop ("Quote the fact. Quote the fact. Quote the …") and get cut off at the
token limit mid-sentence. A language gradient built from such text would paste the loop into
the agent's prompt, so gradients and merged gradients pass :func:`tidy_feedback` first.
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_TERMINAL = (".", "!", "?", ":", ")", '"', "'", "`", "*")
_MARKER = re.compile(r"\d+[.)]|[-*•]")


def _key(sentence: str) -> str:
    return " ".join(sentence.lower().split())


def tidy_feedback(text: str) -> str:
    """``text`` without repeated sentences and without a trailing fragment.

    Sentences (split after ``.``/``!``/``?`` and at line breaks) that repeat an earlier one,
    ignoring case and spacing, are dropped; line structure of the first occurrences is kept.
    A last sentence with no closing punctuation is dropped when a complete sentence precedes
    it (the reply was cut off). Pure; empty in, empty out.

    Example:
        >>> tidy_feedback("Be brief. Be brief.\\nBe brief. Quote the")
        'Be brief.'
    """
    lines: list[list[str]] = []
    seen: set[str] = set()
    for line in text.strip().splitlines():
        kept = []
        for sentence in _SENTENCE_END.split(line):
            key = _key(sentence)
            if _MARKER.fullmatch(key):  # a list marker split off its item: never a repeat
                kept.append(key)
            elif key and key not in seen:
                seen.add(key)
                kept.append(sentence.strip())
        if any(not _MARKER.fullmatch(piece) for piece in kept):
            lines.append(kept)
    sentences = [piece for line in lines for piece in line]
    cut_off = len(sentences) > 1 and not sentences[-1].endswith(_TERMINAL)
    if cut_off and any(piece.endswith(_TERMINAL) for piece in sentences[:-1]):
        lines[-1].pop()
        if all(_MARKER.fullmatch(piece) for piece in lines[-1]):
            lines.pop()
    return "\n".join(" ".join(line) for line in lines)
