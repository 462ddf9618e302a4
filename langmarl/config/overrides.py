"""Dotted-key overrides of a config mapping (``--set a.b=value``, ``train(**overrides)``)."""

from __future__ import annotations

import json
from typing import Any

import yaml

from langmarl.core.errors import ConfigError


def parse_assignment(text: str) -> tuple[str, Any]:
    """Parse ``"a.b=value"`` into ``("a.b", value)``; the value is read as a YAML scalar,
    so ``3`` is an int, ``true`` a bool, ``null`` None and ``[1, 2]`` a list.

    Raises:
        ConfigError: if there is no ``=`` or the key is empty.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"Override {text!r} must look like key=value (e.g. num_iterations=3).")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.strip(), value


def apply_overrides(data: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of ``data`` with dotted-key ``overrides`` applied.

    ``{"llm.temperature": 0.2}`` sets ``data["llm"]["temperature"]``; an LLM given as a
    preset name is expanded to ``{"preset": name}`` first so single fields can be changed.
    """
    result = json.loads(json.dumps(data, default=str))
    for dotted, value in overrides.items():
        parts = dotted.split(".")
        node = result
        for part in parts[:-1]:
            child = node.get(part)
            if isinstance(child, str):
                child = {"preset": child}
            elif not isinstance(child, dict):
                child = {}
            node[part] = child
            node = child
        node[parts[-1]] = value
    return result
