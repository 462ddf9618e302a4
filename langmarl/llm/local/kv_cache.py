"""Handing a causal LM's KV cache back to it, across transformers versions.

transformers 5.x renamed the forward's ``past_key_values`` argument and output field to
``cache`` and warns (a FutureWarning) on every call that still uses the old keyword; 4.x
knows only ``past_key_values``. The decoding loop and MAGRPO's log-prob pass call the model
hundreds of times a run, so they ask these two functions instead of naming either spelling.
"""

from __future__ import annotations

import inspect
from typing import Any


def cache_keyword(model: Any) -> str:
    """The name under which ``model``'s forward takes the cache (a loop asks once).

    A PEFT wrapper's forward takes ``**kwargs``, so the base model's signature decides.
    """
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return _cache_keyword(type(base))


def cache_kwargs(model: Any, cache: Any) -> dict[str, Any]:
    """The keyword argument that passes ``cache`` to ``model``'s forward."""
    return {cache_keyword(model): cache}


def output_cache(output: Any) -> Any:
    """The KV cache of a forward's output, under whichever name the installed version uses."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


_KEYWORDS: dict[type, str] = {}
"""Model class -> its cache keyword: signatures are read once per class, not per token."""


def _cache_keyword(model_type: type) -> str:
    if model_type not in _KEYWORDS:
        forward = getattr(model_type, "forward", None)
        try:
            parameters = inspect.signature(forward).parameters if forward else {}
        except (TypeError, ValueError):
            parameters = {}
        _KEYWORDS[model_type] = "cache" if "cache" in parameters else "past_key_values"
    return _KEYWORDS[model_type]
