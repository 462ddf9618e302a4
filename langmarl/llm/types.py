"""Records that cross the LLM layer: a chat request, its result, the backend protocol."""

from __future__ import annotations

import base64
import json
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from langmarl.core.errors import LLMError

Message = dict[str, Any]
"""One OpenAI-format chat message: ``{"role": ..., "content": str | list[part]}``."""


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion request, already resolved against the config's defaults.

    ``None`` sampling fields mean "the backend's default".
    """

    messages: list[Message]
    max_tokens: int
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    tools: list[ToolSpec] | None = None
    """Functions the model may call (OpenAI function calling); None sends no tools."""
    tool_choice: Literal["auto", "none"] | None = None
    """``"none"`` asks for a text reply although ``tools`` are given (None: the server's
    default, ``"auto"``)."""


@dataclass(frozen=True)
class ChatResult:
    """What a backend returns for one request."""

    text: str
    input_tokens: int
    output_tokens: int
    model: str
    finish_reason: str = "stop"
    tool_calls: tuple[ToolCall, ...] = ()
    """The functions the model asked to call (empty for a plain reply)."""

    @property
    def usage(self) -> dict[str, int]:
        """Token usage in the reference's shape: ``{"input": N, "output": N}``."""
        return {"input": self.input_tokens, "output": self.output_tokens}


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call: its name, what it does, and a JSON schema of its
    arguments (an ``"object"`` schema)."""

    name: str
    description: str
    parameters: dict[str, Any]

    def openai(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry."""
        function = {"name": self.name, "description": self.description}
        return {"type": "function", "function": {**function, "parameters": self.parameters}}


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for.

    ``arguments`` is the parsed JSON object; when the model's argument text is not a JSON
    object it is empty and ``parse_error`` says why (the text is kept in ``raw_arguments``).
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str = "{}"
    parse_error: str | None = None

    @classmethod
    def parse(cls, id: str, name: str, raw_arguments: str | None) -> ToolCall:
        """A call from the model's argument text (``""``/None: no arguments)."""
        raw = raw_arguments or "{}"
        try:
            arguments = json.loads(raw)
        except ValueError as exc:
            return cls(id, name, {}, raw, f"arguments are not JSON ({exc}): {raw[:120]!r}")
        except RecursionError:  # a model's reply is data: nesting past the parser's depth
            return cls(id, name, {}, raw, f"arguments nest too deeply: {raw[:120]!r}")
        if not isinstance(arguments, dict):
            return cls(id, name, {}, raw, f"arguments are not a JSON object: {raw[:120]!r}")
        return cls(id, name, arguments, raw)

    def openai(self) -> dict[str, Any]:
        """The OpenAI ``tool_calls`` entry of the assistant message that made this call."""
        function = {"name": self.name, "arguments": self.raw_arguments}
        return {"id": self.id, "type": "function", "function": function}


class MalformedReplyError(Exception):
    """The server answered 2xx but the body is not a usable chat completion."""


class ToolsUnsupportedError(LLMError):
    """The endpoint rejected a request that carried ``tools`` (the caller may fall back to
    a plain-text protocol; the backend sends no tools from then on)."""


def assistant_message(result: ChatResult) -> Message:
    """The assistant turn of ``result`` for the next request, with its tool calls."""
    message: Message = {"role": "assistant", "content": result.text or None}
    if result.tool_calls:
        message["tool_calls"] = [call.openai() for call in result.tool_calls]
    return message


def tool_message(call: ToolCall, text: str) -> Message:
    """The ``tool`` turn answering ``call`` with ``text``."""
    return {"role": "tool", "tool_call_id": call.id, "content": text}


class ChatBackend(Protocol):
    """Sends requests to one model. Backends do one attempt per call; the client retries.

    Implementations raise the ``openai`` exception types (or ``TimeoutError``/``OSError``) for
    transport failures, so the client's retry policy treats every backend alike, and
    :class:`langmarl.core.errors.LLMError` for failures that must not be retried.

    Tools: a backend that sends ``request.tools`` (OpenAI function calling) has a
    ``supports_tools`` attribute that is True; one without it ignores them (the client
    refuses to send tools to it, see :meth:`LLMClient.chat_with_tools`).
    """

    endpoint: str

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Run one chat completion."""
        ...


def system_user_messages(
    system_prompt: str, user_input: str, images: list[str | Path | bytes] | None = None
) -> list[Message]:
    """Build ``[system, user]`` messages; images become OpenAI ``image_url`` parts."""
    messages: list[Message] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    if not images:
        messages.append({"role": "user", "content": user_input})
        return messages
    parts: list[dict[str, Any]] = [{"type": "text", "text": user_input}]
    parts += [{"type": "image_url", "image_url": {"url": image_url(img)}} for img in images]
    messages.append({"role": "user", "content": parts})
    return messages


def image_url(image: str | Path | bytes) -> str:
    """An ``http(s)``/``data:`` URL as is; a file path or PNG bytes as a base64 data URL."""
    if isinstance(image, bytes):
        return "data:image/png;base64," + base64.b64encode(image).decode("ascii")
    text = str(image)
    if text.startswith(("http://", "https://", "data:")):
        return text
    path = Path(text)
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def has_images(messages: list[Message]) -> bool:
    """Whether any message carries an image part."""
    return any(
        isinstance(m.get("content"), list)
        and any(part.get("type") == "image_url" for part in m["content"])
        for m in messages
    )


def message_text(message: Message) -> str:
    """The text of a message, joining text parts of multi-part content."""
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
