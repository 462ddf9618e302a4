"""Which LLM failures are worth retrying, how long to wait, and how to describe them.

The ``openai`` SDK's exceptions are looked up only where the SDK was imported (by the backend
of an HTTP endpoint): nothing else raises them, and importing it costs ~0.7 CPU-s that a run on
the embedded model would pay in every process.
"""

from __future__ import annotations

import asyncio
import json
import sys
import weakref
from types import ModuleType

from tenacity import RetryCallState, wait_exponential_jitter

from langmarl.llm.types import MalformedReplyError

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
MAX_RETRY_AFTER = 60.0


def _sdk() -> ModuleType | None:
    """The ``openai`` module where something imported it (only then can its errors exist)."""
    return sys.modules.get("openai")


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts, connection errors and malformed replies are retried."""
    sdk = _sdk()
    if sdk is not None:
        if isinstance(exc, sdk.APIStatusError):
            return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
        sdk_errors = (sdk.APITimeoutError, sdk.APIConnectionError, sdk.APIResponseValidationError)
        if isinstance(exc, sdk_errors):
            return True
    return isinstance(
        exc, MalformedReplyError | json.JSONDecodeError | TimeoutError | ConnectionError
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
    sdk = _sdk()
    if sdk is not None:
        described = _describe_sdk_failure(sdk, exc)
        if described is not None:
            return described
    if isinstance(exc, TimeoutError):
        return "timed out (raise the config's timeout if the model is slow)"
    if isinstance(exc, MalformedReplyError):
        return f"malformed reply: {str(exc)[:200]}"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed reply: the body is not JSON ({exc.msg} at char {exc.pos})"
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _describe_sdk_failure(sdk: ModuleType, exc: BaseException) -> str | None:
    """:func:`describe_failure` of the ``openai`` SDK's own errors (``None``: not one)."""
    if isinstance(exc, sdk.APIStatusError):
        hints = {
            401: " (check the API key)",
            403: " (the key may lack access to this model)",
            404: " (check base_url and model_string)",
            429: " (rate limited; lower max_concurrency or wait)",
        }
        body = str(getattr(exc, "message", exc))[:200]
        return f"HTTP {exc.status_code}{hints.get(exc.status_code, '')}: {body}"
    if isinstance(exc, sdk.APITimeoutError):
        return "timed out (raise the config's timeout if the model is slow)"
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"cannot connect ({type(cause).__name__}: {str(cause)[:160]})"
    if isinstance(exc, sdk.APIResponseValidationError):
        return f"malformed reply: {str(exc)[:200]}"
    return None


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
