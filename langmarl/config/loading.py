"""Reading config files (JSON or YAML), dotted overrides, and choosing the config class."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import yaml

from langmarl.config.base import BaseConfig
from langmarl.core.errors import ConfigError
from langmarl.core.files import read_input_text
from langmarl.core.validation import did_you_mean


class ConfigKinds:
    """Maps an ``env`` name to its config class. An object, so tests can use a fresh one."""

    def __init__(self) -> None:
        self._kinds: dict[str, type[BaseConfig] | str] = {}

    def register(self, env: str, config_cls: type[BaseConfig] | str) -> None:
        """Register ``config_cls`` for ``env``; a ``"module:Class"`` string is imported on
        first use (for config classes defined outside ``langmarl.config``)."""
        self._kinds[env] = config_cls

    def get(self, env: str) -> type[BaseConfig]:
        """The config class for ``env``.

        Raises:
            ConfigError: for an unregistered env, with the closest known name.
        """
        if env in self._kinds:
            kind = self._kinds[env]
            if isinstance(kind, str):
                module, _, name = kind.partition(":")
                kind = self._kinds[env] = getattr(importlib.import_module(module), name)
            return kind
        raise ConfigError(
            f"Unknown env {env!r} in config.{did_you_mean(env, self._kinds)} "
            f"Known: {', '.join(sorted(self._kinds))}."
        )

    def names(self) -> list[str]:
        return sorted(self._kinds)


def default_kinds() -> ConfigKinds:
    """The built-in config kinds."""
    from langmarl.config.envs import (
        LanguageTaskConfig,
        OvercookedConfig,
        PistonballConfig,
        TicTacToeConfig,
    )

    kinds = ConfigKinds()
    kinds.register("language", LanguageTaskConfig)
    kinds.register("overcooked", OvercookedConfig)
    kinds.register("pistonball", PistonballConfig)
    kinds.register("tictactoe", TicTacToeConfig)
    kinds.register("parallel_tasks", "langmarl.parl.config:ParallelTasksConfig")
    return kinds


CONFIG_KINDS = default_kinds()


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


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> BaseConfig:
    """Load a config file, choosing the config class from its ``env`` key.

    Args:
        path: A JSON or YAML file.
        overrides: Dotted keys to values, applied before validation.

    Returns:
        A ``BaseConfig`` subclass instance (``LanguageTaskConfig`` for ``env: language``, …).

    Raises:
        ConfigError: naming the invalid field, its value and the fix.
    """
    data = apply_overrides(read_mapping(Path(path)), overrides or {})
    config_cls = CONFIG_KINDS.get(str(data.get("env", "language")))
    return config_cls.from_dict(data, source=str(path))
