"""The OpenAI ``chat/completions`` request, validated strictly.

Decisions, so that every request either runs as asked or is refused with a 400:

- Types are strict: ``true`` is not an integer, ``"1"`` is not a number, ``16.0`` is not a
  token count. Numbers must be finite and in OpenAI's ranges (temperature [0, 2], top_p
  (0, 1], penalties [-2, 2], n >= 1, max_tokens >= 1).
- Unknown fields are refused with a "did you mean"; OpenAI fields that change nothing here
  (``user``, ``metadata``, ``store``, …) are accepted and ignored; OpenAI features the
  embedded model lacks (tools, logprobs, JSON mode, non-zero penalties, images) are accepted
  only at their neutral value, so a client never silently gets something else than it asked.
- Roles are ``system``, ``developer`` (read as ``system``), ``user`` and ``assistant``;
  content is a string or a list of text parts, never null.
- ``model`` may be omitted or name any model: there is one.

Limits that depend on the server's settings (the ``max_tokens`` cap, ``n``) are checked by
:func:`langmarl.llm.server.parsing.check_limits`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

Finite = Field(allow_inf_nan=False)
TEXT_ONLY = "the embedded model reads text only"


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class TextPart(_Strict):
    """One ``{"type": "text", "text": ...}`` part of a message's content."""

    type: Literal["text"]
    text: str


def _content_parts(value: Any) -> Any:
    """Content as a list of text parts; refuses null, numbers and non-text parts by name."""
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if not isinstance(value, list):
        raise PydanticCustomError(
            "content_type",
            "must be a string or a list of parts of type 'text'",
        )
    for part in value:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(kind, str) and kind != "text":
            raise PydanticCustomError(
                "unsupported_content", TEXT_ONLY + ", not parts of type '{kind}'", {"kind": kind}
            )
    return value


def _stop_list(value: Any) -> Any:
    """``stop`` as a list: one string becomes a list of one."""
    if isinstance(value, str):
        return [value]
    if value is not None and not isinstance(value, list):
        raise PydanticCustomError(
            "stop_type",
            "must be a string or a list of up to 4 strings",
        )
    return value


class ChatMessage(_Strict):
    """One message of the conversation."""

    role: Literal["system", "developer", "user", "assistant"]
    content: Annotated[list[TextPart], BeforeValidator(_content_parts)]
    name: str | None = None
    """Accepted and ignored (the chat template has no place for it)."""

    def text(self) -> str:
        """The content's text parts joined by newlines."""
        return "\n".join(part.text for part in self.content)


class StreamOptions(_Strict):
    """``stream_options``: ``include_usage`` adds a last chunk with the token usage."""

    include_usage: bool = False


NEUTRAL_VALUES: dict[str, tuple[Any, ...]] = {
    "tools": (None, []),
    "tool_choice": (None, "none", "auto"),
    "functions": (None, []),
    "function_call": (None, "none", "auto"),
    "logit_bias": (None, {}),
    "logprobs": (None, False),
    "top_logprobs": (None, 0),
    "response_format": (None, {"type": "text"}),
    "modalities": (None, ["text"]),
    "audio": (None,),
    "prediction": (None,),
    "web_search_options": (None,),
    "presence_penalty": (None, 0),
    "frequency_penalty": (None, 0),
}
"""Fields for features the embedded model lacks, with the values that ask for nothing."""


class ChatCompletionRequest(_Strict):
    """The body of ``POST /v1/chat/completions``."""

    messages: list[ChatMessage] = Field(min_length=1)
    model: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    """Same as ``max_tokens`` (OpenAI's newer name); send at most one of the two."""
    temperature: Annotated[float | None, Finite, Field(ge=0, le=2)] = None
    top_p: Annotated[float | None, Finite, Field(gt=0, le=1)] = None
    n: int | None = Field(default=None, ge=1)
    seed: int | None = Field(default=None, ge=-(2**63), le=2**63 - 1)
    stop: Annotated[
        list[Annotated[str, Field(min_length=1)]] | None,
        BeforeValidator(_stop_list),
        Field(max_length=4),
    ] = None
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    presence_penalty: Annotated[float | None, Finite, Field(ge=-2, le=2)] = None
    frequency_penalty: Annotated[float | None, Finite, Field(ge=-2, le=2)] = None

    # Accepted and ignored: they change nothing about the completion.
    user: str | None = None
    metadata: dict[str, str] | None = None
    store: bool | None = None
    service_tier: str | None = None
    parallel_tool_calls: bool | None = None
    prompt_cache_key: str | None = None
    safety_identifier: str | None = None

    # Accepted only at a neutral value (see NEUTRAL_VALUES).
    tools: Any = None
    tool_choice: Any = None
    functions: Any = None
    function_call: Any = None
    logit_bias: Any = None
    logprobs: Any = None
    top_logprobs: Any = None
    response_format: Any = None
    modalities: Any = None
    audio: Any = None
    prediction: Any = None
    web_search_options: Any = None


FIELD_NAMES = sorted(
    {name for model in (ChatCompletionRequest, ChatMessage, TextPart, StreamOptions)
     for name in model.model_fields}
)  # fmt: skip
"""Every field name of the request, for "did you mean" on an unknown one."""
