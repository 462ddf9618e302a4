"""Errors the server answers with, in the OpenAI error shape.

Every error response, 400 to 500, carries
``{"error": {"message", "type", "param", "code"}}``, which the ``openai`` client turns into its
typed exceptions (400 → ``BadRequestError`` with the message, 413 → ``APIStatusError``, 500 →
``InternalServerError``). 500 is kept for faults of the server itself.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

from langmarl.core.errors import LangmarlError

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"


class RequestError(LangmarlError):
    """A request the server refuses; becomes an HTTP error response.

    Attributes:
        status: HTTP status code.
        message: What is wrong and what to send instead.
        param: The offending field as a path (``"messages[0].content"``), if any.
        code: A short machine-readable reason (``"invalid_value"``, ``"request_too_large"``).
        kind: The OpenAI error ``type``.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        param: str | None = None,
        code: str | None = None,
        kind: str = INVALID_REQUEST,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.kind = kind

    def body(self) -> dict[str, Any]:
        """The OpenAI-style error body."""
        return error_body(self.message, self.kind, self.param, self.code)

    def response(self) -> JSONResponse:
        """The JSON error response."""
        return JSONResponse(status_code=self.status, content=self.body())


def error_body(
    message: str, kind: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """``{"error": {...}}`` as OpenAI sends it."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def server_fault(exc: BaseException, during: str) -> RequestError:
    """A 500 for an unexpected failure; names its type but not internals beyond that."""
    return RequestError(
        f"The server failed while {during} ({type(exc).__name__}); the request may be "
        "retried, and the server log has the details.",
        status=500,
        kind=SERVER_ERROR,
    )


def sse_error(error: RequestError) -> str:
    """A server-sent event carrying ``error`` (the ``openai`` client raises ``APIError``)."""
    return f"data: {json.dumps(error.body())}\n\n"
