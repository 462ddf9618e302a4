"""From HTTP bytes to a validated request, or a :class:`RequestError` naming what is wrong.

Order of the checks, cheapest first: the declared size (``Content-Length``), the bytes as they
arrive (for chunked bodies, which declare none), the content type, UTF-8, JSON, the schema,
then the server's own limits. Everything here runs before a request meets the batcher, so a
bad request can only fail itself.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request

from langmarl.llm.server.config import ServeConfig
from langmarl.llm.server.errors import RequestError
from langmarl.llm.server.schema import FIELD_NAMES, NEUTRAL_VALUES, ChatCompletionRequest
from langmarl.llm.types import ChatRequest

_CODES = {
    "extra_forbidden": "unknown_parameter",
    "missing": "missing_required_parameter",
}


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed ``limit`` bytes.

    A declared ``Content-Length`` over the limit is refused without reading a byte; a chunked
    body is counted as it arrives and refused at the first chunk past the limit.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        if not (declared.isascii() and declared.isdigit()):
            raise RequestError(f"Content-Length {declared[:40]!r} is not a number")
        if int(declared) > limit:
            raise _too_large(f"{int(declared)} bytes", limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(f"more than {limit} bytes", limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: str, limit: int) -> RequestError:
    return RequestError(
        f"Request body of {size} exceeds this server's limit of {limit} bytes: send a shorter "
        "conversation, or start the server with a larger --max-body-bytes.",
        status=413,
        code="request_too_large",
    )


def decode_json(raw: bytes, content_type: str | None) -> Any:
    """The JSON document in ``raw``.

    Raises:
        RequestError: for a non-JSON content type, an empty body, invalid UTF-8 or JSON.
    """
    kind = (content_type or "application/json").split(";")[0].strip().lower()
    if kind != "application/json" and not (
        kind.startswith("application/") and kind.endswith("+json")
    ):
        raise RequestError(
            f"Content-Type {kind!r} is not JSON: send the body with Content-Type: application/json",
            param="Content-Type",
            code="invalid_content_type",
        )
    if not raw.strip():
        raise RequestError("The request body is empty: send a JSON object", code="invalid_json")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(
            f"The request body is not valid UTF-8 (byte {exc.start}): send UTF-8 JSON",
            code="invalid_json",
        ) from None
    try:
        return json.loads(text)
    except RecursionError:
        raise RequestError("The JSON body is nested too deeply", code="invalid_json") from None
    except ValueError as exc:  # JSONDecodeError, or an integer of too many digits
        raise RequestError(f"The body is not valid JSON: {exc}", code="invalid_json") from None


def parse_request(body: Any) -> ChatCompletionRequest:
    """Validate a decoded body against the chat/completions schema.

    Raises:
        RequestError: naming the first offending field (``param``) and what to send instead.
    """
    if not isinstance(body, dict):
        raise RequestError(
            f"The request body must be a JSON object, got a JSON {_json_kind(body)}",
            code="invalid_type",
        )
    try:
        return ChatCompletionRequest.model_validate(body)
    except ValidationError as exc:
        raise _field_error(exc) from None


def _field_error(exc: ValidationError) -> RequestError:
    errors = exc.errors(include_url=False)
    errors.sort(key=lambda error: error["type"] == "missing")  # often explained by a typo
    first = errors[0]
    param = _param(first["loc"])
    if first["type"] == "extra_forbidden":
        message = f"Unrecognized request argument supplied: {param}"
        name = str(first["loc"][-1])
        close = difflib.get_close_matches(name, FIELD_NAMES, n=1)
        message += f" (did you mean {close[0]!r}?)" if close else ""
    elif first["type"] == "missing":
        message = f"Missing required parameter: {param}"
    else:
        reason = first["msg"]
        if first["type"] == "model_type":
            reason = "must be a JSON object"
        message = f"Invalid value for {param}: {reason} (got {_short(first.get('input'))})"
    if len(errors) > 1:
        message += f" [and {len(errors) - 1} more error(s)]"
    code = _CODES.get(first["type"], "invalid_type" if first["type"].endswith("_type") else None)
    return RequestError(message, param=param or None, code=code or "invalid_value")


def check_limits(request: ChatCompletionRequest, config: ServeConfig) -> None:
    """Check what the schema cannot: unsupported features and the server's caps.

    Raises:
        RequestError: naming the field.
    """
    for name, neutral in NEUTRAL_VALUES.items():
        value = getattr(request, name)
        if not any(value == ok for ok in neutral):
            raise RequestError(
                f"{name}={_short(value)} is not supported by the embedded model server; "
                f"omit it or send {_short(neutral[-1])}",
                param=name,
                code="unsupported_parameter",
            )
    if request.stream_options is not None and not request.stream:
        raise _invalid("stream_options", "stream_options is only allowed with stream: true")
    both = (request.max_tokens, request.max_completion_tokens)
    if None not in both and both[0] != both[1]:
        raise _invalid("max_completion_tokens", "Send only one of max_tokens and its newer name")
    name = "max_tokens" if request.max_completion_tokens is None else "max_completion_tokens"
    if (budget := max_tokens(request, config)) > config.max_tokens_cap:
        raise _invalid(
            name,
            f"{name} is too large: {budget}. This server generates at most "
            f"{config.max_tokens_cap} tokens per completion.",
        )
    if (request.n or 1) > config.max_n:
        raise _invalid(
            "n", f"n is too large: {request.n}. This server generates at most {config.max_n}."
        )


def _invalid(param: str, message: str) -> RequestError:
    return RequestError(message, param=param, code="invalid_value")


def max_tokens(request: ChatCompletionRequest, config: ServeConfig) -> int:
    """The request's token budget per choice."""
    asked = request.max_completion_tokens or request.max_tokens
    return config.max_tokens_default if asked is None else asked


def chat_requests(request: ChatCompletionRequest, config: ServeConfig) -> list[ChatRequest]:
    """One backend request per choice (``n``); a seed moves on by one per choice."""
    messages = [
        {"role": "system" if m.role == "developer" else m.role, "content": m.text()}
        for m in request.messages
    ]
    return [
        ChatRequest(
            messages=messages,
            max_tokens=max_tokens(request, config),
            temperature=request.temperature,
            top_p=request.top_p,
            seed=None if request.seed is None else request.seed + index,
            stop=request.stop,
        )
        for index in range(request.n or 1)
    ]


def _param(loc: tuple[int | str, ...]) -> str:
    """``("messages", 0, "content")`` → ``"messages[0].content"``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value) if _is_json(value) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _json_kind(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")
