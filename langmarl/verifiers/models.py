"""Verification outcomes and results."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class VerificationOutcome(StrEnum):
    """How a verification ended."""

    SUCCESS = "success"
    """The solution is correct."""
    FAILURE = "failure"
    """The solution is wrong (or there was nothing to verify)."""
    ERROR = "error"
    """The verifier itself failed (after its retries)."""
    TIMEOUT = "timeout"
    """The verification took longer than the verifier's timeout."""


class VerificationResult(BaseModel):
    """The result of verifying one solution.

    Attributes:
        status: The outcome.
        result: What the verifier saw (the extracted answer, the program's output, …).
        duration: Seconds spent, retries included.
        timestamp: When the verification finished (UTC).
        metadata: Verifier-specific details (attempts, return code, …).
        error_message: Why it failed, for ``FAILURE``/``ERROR``/``TIMEOUT``.
    """

    status: VerificationOutcome
    result: str = ""
    duration: float = 0.0
    timestamp: datetime = Field(default_factory=lambda: datetime.now(UTC))
    metadata: dict[str, Any] = Field(default_factory=dict)
    error_message: str | None = None
