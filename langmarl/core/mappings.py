"""Reading a user's JSON or YAML file whose top level is a mapping (run configs, LLM configs).

It lives in ``core`` because both ``config`` (run configs) and ``llm`` (LLM config files named
by path) read such files, and ``llm`` sits below ``config``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from langmarl.core.errors import ConfigError
from langmarl.core.files import read_input_text


def describe_parse_error(exc: json.JSONDecodeError | yaml.YAMLError) -> str:
    """One line saying what is wrong and where (line and column, counted from 1)."""
    if isinstance(exc, json.JSONDecodeError):
        cut = exc.pos >= len(exc.doc.rstrip())
        hint = " (the file ends too early: was it cut short?)" if cut else ""
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}{hint}."
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{problem}{where}."


def read_mapping(path: Path) -> dict[str, Any]:
    """Read a JSON or YAML file whose top level is a mapping.

    Raises:
        ConfigError: if the file is missing, unreadable, not UTF-8, not valid JSON/YAML
            (the message gives the line and column) or not a mapping.
    """
    text = read_input_text(path)
    try:
        data = yaml.safe_load(text) if path.suffix in {".yaml", ".yml"} else json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        message = describe_parse_error(exc)
        raise ConfigError(f"Config file {str(path)!r} is not valid: {message}") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"Config file {str(path)!r} must hold a mapping of keys to values, "
            f"not a {type(data).__name__}."
        )
    return data
