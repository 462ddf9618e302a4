"""Per-model request quirks, in one table.

Reasoning models take ``max_completion_tokens`` instead of ``max_tokens`` and reject
sampling parameters; a request for them is rewritten here rather than at every call site.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from langmarl.llm.types import ChatRequest


@dataclass(frozen=True)
class Quirks:
    max_tokens_param: str = "max_tokens"
    """Name of the response-length parameter."""
    sampling: bool = True
    """Whether temperature/top_p are accepted."""


REASONING = Quirks(max_tokens_param="max_completion_tokens", sampling=False)

# First match wins; patterns match the model string with any "provider/" prefix removed.
QUIRKS: list[tuple[re.Pattern[str], Quirks]] = [
    (re.compile(r"^(o1|o3|o4)(-|$)"), REASONING),
    (re.compile(r"^gpt-5(?!-chat)"), REASONING),
    (re.compile(r"^deepseek-reasoner$"), Quirks(sampling=False)),
]


def quirks_for(model_string: str) -> Quirks:
    """The quirks of ``model_string`` (default: none)."""
    bare = model_string.rsplit("/", 1)[-1]
    for pattern, quirks in QUIRKS:
        if pattern.search(bare):
            return quirks
    return Quirks()


def request_params(model_string: str, request: ChatRequest) -> dict[str, Any]:
    """Keyword arguments for ``chat.completions.create`` for this model."""
    quirks = quirks_for(model_string)
    params: dict[str, Any] = {
        "model": model_string,
        "messages": request.messages,
        quirks.max_tokens_param: request.max_tokens,
    }
    if quirks.sampling:
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.top_p is not None:
            params["top_p"] = request.top_p
    if request.seed is not None:
        params["seed"] = request.seed
    if request.stop:
        params["stop"] = request.stop
    params.update(request.extra)
    return params
