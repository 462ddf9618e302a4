"""``DataPoint``: one problem with its reference answer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class DataPoint(BaseModel):
    """A question, its reference answer and optional rationale/metadata.

    Attributes:
        question: The problem posed to the LLM.
        final_answer: The reference answer the verifier compares against.
        rationale: How the answer is reached (optional).
        metadata: Anything else (source, difficulty, tests, …).
    """

    question: str
    final_answer: str
    rationale: str | None = None
    metadata: dict[str, Any] | None = None
