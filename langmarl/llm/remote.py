"""The backend for any OpenAI-compatible HTTP endpoint (OpenAI, vLLM, Ollama, `langmarl serve`…)."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

import openai

from langmarl.llm.config import LLMConfig
from langmarl.llm.quirks import request_params
from langmarl.llm.types import (
    ChatRequest,
    ChatResult,
    MalformedReplyError,
    ToolCall,
    ToolsUnsupportedError,
)

__all__ = ["MalformedReplyError", "OpenAIBackend", "parse_completion"]


class OpenAIBackend:
    """One attempt per call through the ``openai`` SDK (its own retries are off).

    The SDK's async client keeps a connection pool bound to an event loop, so one client is
    kept per loop; sync callers (``LLMClient.chat``) each run on a fresh loop.

    Tools: every endpoint is assumed to take OpenAI ``tools`` until it answers 400/422 to
    a request carrying them before any such request succeeded. That answer raises
    :class:`ToolsUnsupportedError` and sets ``supports_tools`` to False, so callers switch
    to a plain-text protocol for good; once tools worked, a 400 is an ordinary error.
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.endpoint = config.endpoint
        self.supports_tools = True
        self._tools_confirmed = False
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=self.config.get_api_key(),
                base_url=self.config.base_url,
                timeout=self.config.timeout,
                max_retries=0,
            )
            self._clients[loop] = client
        return client

    def sync_client(self) -> openai.OpenAI:
        """A plain synchronous ``openai.OpenAI`` client for this endpoint."""
        return openai.OpenAI(
            api_key=self.config.get_api_key(),
            base_url=self.config.base_url,
            timeout=self.config.timeout,
            max_retries=0,
        )

    async def complete(self, request: ChatRequest) -> ChatResult:
        params = request_params(self.config.model_string, request)
        if request.tools:
            params["tools"] = [tool.openai() for tool in request.tools]
            if request.tool_choice:
                params["tool_choice"] = request.tool_choice
        try:
            response: Any = await self._client().chat.completions.create(**params)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            if not request.tools or self._tools_confirmed:
                raise
            self.supports_tools = False
            raise ToolsUnsupportedError(
                self.endpoint, self.config.model_string, f"tools rejected: {str(exc)[:200]}"
            ) from exc
        self._tools_confirmed = self._tools_confirmed or bool(request.tools)
        return parse_completion(response, self.config.model_string)


def parse_completion(response: Any, model: str) -> ChatResult:
    """Turn an SDK response into a :class:`ChatResult`.

    Raises:
        MalformedReplyError: for a body that is not a chat completion or has no text.
    """
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedReplyError(f"reply has no choices: {str(response)[:200]!r}")
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None)
    calls = tuple(
        ToolCall.parse(str(call.id), str(call.function.name), call.function.arguments)
        for call in getattr(message, "tool_calls", None) or []
        if getattr(call, "function", None) is not None  # custom (non-function) tools: none sent
    )
    if text is None and calls:
        text = ""
    if text is None:
        refusal = getattr(message, "refusal", None)
        raise MalformedReplyError(
            f"reply has no text (refusal: {refusal!r})" if refusal else "reply has no text"
        )
    usage = getattr(response, "usage", None)
    return ChatResult(
        text=text,
        input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        model=str(getattr(response, "model", None) or model),
        finish_reason=str(getattr(choices[0], "finish_reason", None) or "stop"),
        tool_calls=calls,
    )
