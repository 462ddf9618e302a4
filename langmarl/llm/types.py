"""Records that cross the LLM layer: a chat request, its result, the backend protocol."""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

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


@dataclass(frozen=True)
class ChatResult:
    """What a backend returns for one request."""

    text: str
    input_tokens: int
    output_tokens: int
    model: str
    finish_reason: str = "stop"

    @property
    def usage(self) -> dict[str, int]:
        """Token usage in the reference's shape: ``{"input": N, "output": N}``."""
        return {"input": self.input_tokens, "output": self.output_tokens}


class ChatBackend(Protocol):
    """Sends requests to one model. Backends do one attempt per call; the client retries.

    Implementations raise the ``openai`` exception types (or ``TimeoutError``/``OSError``) for
    transport failures, so the client's retry policy treats every backend alike, and
    :class:`langmarl.core.errors.LLMError` for failures that must not be retried.
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
