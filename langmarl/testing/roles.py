"""Which language-space role sent a chat request, read from its system prompt.

Scripted LLMs and test servers answer each role differently (critic JSON, gradients,
merges, rewrites, actor answers); these helpers recognise the role from the phrases the
built-in prompts (``langmarl.textgrad.prompts``) use, so tests need not repeat them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

Role = Literal["critic", "aggregate", "rewrite", "gradient", "actor"]

_MARKERS: tuple[tuple[str, Role], ...] = (
    ("critic", "critic"),
    ("merge improvement advice", "aggregate"),
    ("rewrite the instructions", "rewrite"),
    ("improve the instructions", "gradient"),
)


def role_of_system(system: str) -> Role:
    """The role whose system prompt is ``system`` (``"actor"`` when none matches)."""
    return next((role for marker, role in _MARKERS if marker in system), "actor")


def role_of_body(body: Mapping[str, Any]) -> Role:
    """The role of an OpenAI chat-completions request body."""
    messages = body.get("messages") or []
    system = messages[0].get("content", "") if messages else ""
    return role_of_system(system if isinstance(system, str) else str(system))


def role_responder(replies: Mapping[Role, str]) -> Any:
    """An ``OpenAIStub`` responder answering each role with ``replies[role]``."""

    def respond(body: dict[str, Any]) -> str:
        return replies[role_of_body(body)]

    return respond
