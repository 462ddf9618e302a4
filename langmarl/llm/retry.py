"""Which LLM failures are worth retrying, how long to wait, and how to describe them."""

from __future__ import annotations

import asyncio
import json
import weakref

import openai
from tenacity import RetryCallState, wait_exponential_jitter

from langmarl.llm.remote import MalformedReplyError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
MAX_RETRY_AFTER = 60.0


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts, connection errors and malformed replies are retried."""
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return isinstance(
        exc,
        openai.APITimeoutError
        | openai.APIConnectionError
        | openai.APIResponseValidationError
        | MalformedReplyError
        | json.JSONDecodeError
        | TimeoutError
        | ConnectionError,
    )


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds from a ``Retry-After`` header, if the server sent a usable one."""
    response = getattr(exc, "response", None)
    header = getattr(response, "headers", {}).get("retry-after") if response else None
    try:
        return min(float(header), MAX_RETRY_AFTER) if header is not None else None
    except ValueError:
        return None


class RetryWait:
    """Exponential backoff with jitter, never shorter than the server's ``Retry-After``."""

    def __init__(self, initial: float = 0.5, maximum: float = 20.0) -> None:
        self._backoff = wait_exponential_jitter(multiplier=initial, max=maximum, jitter=initial)

    def __call__(self, state: RetryCallState) -> float:
        backoff = self._backoff(state)
        exc = state.outcome.exception() if state.outcome else None
        hinted = retry_after(exc)
        return max(backoff, hinted) if hinted is not None else backoff


def describe_failure(exc: BaseException) -> str:
    """A one-line cause for an ``LLMError``, with a hint where one helps."""
    if isinstance(exc, openai.APIStatusError):
        hints = {
            401: " (check the API key)",
            403: " (the key may lack access to this model)",
            404: " (check base_url and model_string)",
            429: " (rate limited; lower max_concurrency or wait)",
        }
        body = str(getattr(exc, "message", exc))[:200]
        return f"HTTP {exc.status_code}{hints.get(exc.status_code, '')}: {body}"
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return "timed out (raise the config's timeout if the model is slow)"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"cannot connect ({type(cause).__name__}: {str(cause)[:160]})"
    if isinstance(exc, openai.APIResponseValidationError | MalformedReplyError):
        return f"malformed reply: {str(exc)[:200]}"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed reply: the body is not JSON ({exc.msg} at char {exc.pos})"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


class EndpointLimits:
    """One semaphore per (event loop, endpoint): bounds requests in flight to an endpoint
    across every client of it. asyncio semaphores belong to a loop, hence the keying."""

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]
        ] = weakref.WeakKeyDictionary()

    def get(self, endpoint: str, limit: int) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        per_loop = self._by_loop.setdefault(loop, {})
        if endpoint not in per_loop:
            per_loop[endpoint] = asyncio.Semaphore(limit)
        return per_loop[endpoint]


# Process-wide by design: the limit is per endpoint, whichever client sends the request.
ENDPOINT_LIMITS = EndpointLimits()
