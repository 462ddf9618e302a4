"""`LLMClient`: one client for the embedded model and any OpenAI-compatible endpoint."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from langmarl.core.aio import blocking
from langmarl.core.demos import has_demos, policy_messages
from langmarl.core.errors import ConfigError, LLMError
from langmarl.llm.config import LLMConfig
from langmarl.llm.retry import ENDPOINT_LIMITS, RetryWait, describe_failure, is_retryable
from langmarl.llm.tracker import TokenTracker, UsageLedger
from langmarl.llm.types import (
    ChatBackend,
    ChatRequest,
    ChatResult,
    Message,
    ToolSpec,
    has_images,
    system_user_messages,
)

log = logging.getLogger(__name__)


def default_backend(config: LLMConfig) -> ChatBackend:
    """The embedded model for ``provider="local"``, else the OpenAI-compatible backend."""
    if config.provider == "local":
        from langmarl.llm.local.backend import LocalBackend

        return LocalBackend(config)
    from langmarl.llm.remote import OpenAIBackend

    return OpenAIBackend(config)


class ChatOptions(TypedDict, total=False):
    """Optional arguments of the chat methods."""

    max_tokens: int | None
    images: list[str | Path | bytes] | None


class LLMClient:
    """Chat with one model: retries, a per-attempt timeout, bounded concurrency per endpoint,
    and token/cost accounting on every call.

    Args:
        llm_config: The model to call. ``LLMConfig.from_preset("local")`` is the embedded model.
        role: Who is calling (``"actor"``, ``"critic"``, …), for the usage ledger.
        ledger: Where calls are recorded by role (optional; the client's own ``tracker``
            always counts).
        backend: Override the transport (tests pass a scripted one).
    """

    def __init__(
        self,
        llm_config: LLMConfig,
        *,
        role: str = "default",
        ledger: UsageLedger | None = None,
        backend: ChatBackend | None = None,
    ) -> None:
        self.config = llm_config
        self.role = role
        self.ledger = ledger
        self.backend = backend or default_backend(llm_config)
        self.tracker = TokenTracker(
            llm_config.name,
            input_price=llm_config.input_price_per_million,
            output_price=llm_config.output_price_per_million,
        )
        if llm_config.provider != "local" and backend is None:
            llm_config.get_api_key()  # fail now, with the env var's name, not at first call

    def with_role(self, role: str) -> LLMClient:
        """A client for the same model and ledger, recording calls under ``role``."""
        return LLMClient(self.config, role=role, ledger=self.ledger, backend=self.backend)

    def with_model(self, model_string: str) -> LLMClient:
        """A client for another model of the same endpoint (``model_string`` replaced, e.g.
        a weight-space checkpoint's ``agent-K`` folder for the local provider), recording
        into the same ledger under the same role."""
        config = self.config.model_copy(update={"model_string": model_string})
        return LLMClient(config, role=self.role, ledger=self.ledger)

    @property
    def raw_client(self) -> Any:
        """The underlying ``openai.OpenAI`` client (the engine, for the embedded model)."""
        sync_client = getattr(self.backend, "sync_client", None)
        return sync_client() if callable(sync_client) else self.backend

    @property
    def supports_tools(self) -> bool:
        """Whether requests may carry OpenAI ``tools``: the backend says so (the
        OpenAI-compatible one until its endpoint rejects them; never the embedded model)."""
        return bool(getattr(self.backend, "supports_tools", False))

    @property
    def ranks_options(self) -> bool:
        """Whether :meth:`option_logprobs` works: a local model (the log-probabilities of
        given text are not part of the OpenAI chat API)."""
        return callable(getattr(self.backend, "option_logprobs", None))

    def option_logprobs(self, prefix: str, options: list[str]) -> list[float]:
        """Each option's mean token log-probability after the plain text ``prefix``: how a
        small model chooses (:mod:`langmarl.llm.local.scoring`).

        Raises:
            LLMError: if the backend cannot score given text (an OpenAI-compatible endpoint,
                the ct2 engine), or the model call failed.
        """
        score = getattr(self.backend, "option_logprobs", None)
        if not callable(score):
            raise LLMError(
                getattr(self.backend, "endpoint", "?"), self.config.name,
                "this endpoint gives no log-probabilities of given text: rank options with "
                "a local model (provider local), or ask this model for an answer instead",
            )  # fmt: skip
        scores = score(prefix, options)
        self._record(0, 0)  # counted as a call; it generates no tokens
        return [float(s) for s in scores]

    def _request(
        self,
        messages: list[Message],
        max_tokens: int | None,
        temperature: float | None,
        top_p: float | None,
        seed: int | None,
        stop: list[str] | None,
        tools: list[ToolSpec] | None = None,
    ) -> ChatRequest:
        if has_images(messages) and not self.config.is_multimodal:
            raise ConfigError(
                f"Model {self.config.name!r} is not multimodal (is_multimodal=False); "
                "send text only, or configure a multimodal model."
            )
        c = self.config
        return ChatRequest(
            messages=messages,
            max_tokens=max_tokens or c.max_tokens,
            temperature=c.temperature if temperature is None else temperature,
            top_p=c.top_p if top_p is None else top_p,
            seed=c.seed if seed is None else seed,
            stop=stop,
            extra=dict(c.extra_params),
            tools=tools or None,
        )

    async def acomplete(
        self,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        stop: list[str] | None = None,
    ) -> ChatResult:
        """Multi-turn chat: send OpenAI-format ``messages``, get text and usage.

        Raises:
            LLMError: after the retries, naming endpoint, model and cause.
        """
        request = self._request(messages, max_tokens, temperature, top_p, seed, stop)
        return await self._send(request)

    async def _send(self, request: ChatRequest) -> ChatResult:
        """One request under the endpoint's concurrency limit, with retries and accounting."""
        limit = ENDPOINT_LIMITS.get(self.backend.endpoint, self.config.max_concurrency)
        try:
            async with limit:
                result = await self._with_retries(request)
        except LLMError:
            self._record(0, 0, ok=False)
            raise
        self._record(result.input_tokens, result.output_tokens)
        return result

    async def _with_retries(self, request: ChatRequest) -> ChatResult:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=RetryWait(initial=self.config.retry_initial_wait),
            retry=retry_if_exception(is_retryable),
            reraise=True,
            before_sleep=self._log_retry,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self.backend.complete(request)
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(
                self.backend.endpoint, self.config.model_string, describe_failure(exc)
            ) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _log_retry(self, state: Any) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "LLM call to %s failed (attempt %d: %s); retrying",
            self.backend.endpoint,
            state.attempt_number,
            describe_failure(exc) if exc else "?",
        )

    def _record(self, input_tokens: int, output_tokens: int, ok: bool = True) -> None:
        if ok:
            self.tracker.add_usage(input_tokens, output_tokens)
        if self.ledger is not None:
            cost = self.tracker.estimate_cost(input_tokens, output_tokens)
            self.ledger.record(self.role, input_tokens, output_tokens, cost, ok=ok)

    async def achat_with_usage(
        self, system_prompt: str, user_input: str, **options: Unpack[ChatOptions]
    ) -> tuple[str, dict[str, int]]:
        """Send one system + user message; return ``(text, {"input": N, "output": N})``.

        Args:
            system_prompt: System message ("" for none).
            user_input: User message.
            options: ``max_tokens`` (reply length limit; default: the config's) and
                ``images`` (image paths, URLs or PNG bytes, for multimodal models).
        """
        messages = system_user_messages(system_prompt, user_input, options.get("images"))
        result = await self.acomplete(messages, max_tokens=options.get("max_tokens"))
        return result.text, result.usage

    async def achat(
        self, system_prompt: str, user_input: str, **options: Unpack[ChatOptions]
    ) -> str:
        """``achat_with_usage`` without the usage: the reply text."""
        return (await self.achat_with_usage(system_prompt, user_input, **options))[0]

    async def achat_policy(
        self,
        policy: str,
        user_input: str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
    ) -> str:
        """Reply as an agent whose ``policy`` may carry demonstrations
        (:mod:`langmarl.core.demos`): its instruction as the system message, each
        demonstration as an earlier user/assistant turn, then ``user_input``. A policy
        without demonstrations sends what :meth:`achat` sends."""
        if not has_demos(policy) and temperature is None and seed is None:
            return await self.achat(policy, user_input, max_tokens=max_tokens)
        messages = policy_messages(policy, user_input)
        result = await self.acomplete(
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed
        )
        return result.text

    async def achat_with_tools(
        self,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        tool_choice: Literal["auto", "none"] | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        """One function-calling turn: ``messages`` with ``tools``; the result's
        ``tool_calls`` are what the model asked for (answer them with
        :func:`~langmarl.llm.types.tool_message` after
        :func:`~langmarl.llm.types.assistant_message`).

        Raises:
            ConfigError: if this client's backend takes no tools (check :attr:`supports_tools`).
            ToolsUnsupportedError: if the endpoint rejected the tools (then
                :attr:`supports_tools` is False; fall back to a plain-text protocol).
            LLMError: after the retries, for any other failure.
        """
        if not self.supports_tools:
            raise ConfigError(
                f"Model {self.config.name!r} ({self.backend.endpoint}) takes no tools: check "
                "supports_tools first and describe the tools in plain text instead."
            )
        request = self._request(messages, max_tokens, None, None, None, None, tools)
        return await self._send(replace(request, tool_choice=tool_choice))

    chat_with_usage = blocking(achat_with_usage)
    chat_policy = blocking(achat_policy)
    chat = blocking(achat)
    chat_with_tools = blocking(achat_with_tools)
    complete = blocking(acomplete)
