"""A scripted LLM for fast, offline unit tests: replies are given, calls are recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.tracker import UsageLedger
from langmarl.llm.types import ChatRequest, ChatResult, message_text

Reply = str | BaseException
ReplyFn = Callable[[ChatRequest], Reply]


class ScriptedBackend:
    """A backend that answers from a script.

    Args:
        replies: Either a list consumed in order (the last reply repeats when the list runs
            out) or a function of the request. A reply that is an exception is raised, so
            failures and retries can be scripted too.
        latency: Seconds each call waits before answering (for concurrency tests).

    Attributes:
        requests: Every request received, in order.
    """

    endpoint = "scripted"

    def __init__(self, replies: Iterable[Reply] | ReplyFn, latency: float = 0.0) -> None:
        self._fn: ReplyFn | None = replies if callable(replies) else None
        self._replies: list[Reply] = [] if callable(replies) else list(replies)
        if self._fn is None and not self._replies:
            raise ValueError("ScriptedBackend needs at least one reply or a reply function")
        self.latency = latency
        self.requests: list[ChatRequest] = []

    def _next(self, request: ChatRequest) -> Reply:
        if self._fn is not None:
            return self._fn(request)
        return self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]

    async def complete(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        if self.latency:
            await asyncio.sleep(self.latency)
        reply = self._next(request)
        if isinstance(reply, BaseException):
            raise reply
        prompt = " ".join(message_text(m) for m in request.messages)
        return ChatResult(
            text=reply,
            input_tokens=len(prompt.split()),
            output_tokens=len(reply.split()),
            model="scripted",
        )


def scripted_config(name: str = "scripted", **fields: object) -> LLMConfig:
    """An ``LLMConfig`` for scripted clients (no key needed, no real endpoint)."""
    defaults: dict[str, object] = {
        "model_string": "scripted",
        "requires_api_key": False,
        "max_retries": 2,
    }
    return LLMConfig.model_validate({"name": name, **defaults, **fields})


def ScriptedLLM(
    replies: Iterable[Reply] | ReplyFn,
    *,
    role: str = "default",
    ledger: UsageLedger | None = None,
    latency: float = 0.0,
    config: LLMConfig | None = None,
) -> LLMClient:
    """An :class:`LLMClient` whose backend is a :class:`ScriptedBackend`.

    The client path (retries, usage, ledger) is the real one; only the transport is
    scripted. ``client.backend.requests`` lists what was sent.
    """
    backend = ScriptedBackend(replies, latency=latency)
    return LLMClient(config or scripted_config(), role=role, ledger=ledger, backend=backend)
