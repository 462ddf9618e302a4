"""Loading a run config: read the file (JSON or YAML), apply dotted overrides, and validate
it with the config class the environment registry names for its ``env``.

``read_mapping``/``describe_parse_error`` (in :mod:`langmarl.core.mappings`) and
``apply_overrides``/``parse_assignment`` (in :mod:`langmarl.config.overrides`) are
re-exported here, where callers have always found them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmarl.config.base import BaseConfig
from langmarl.config.overrides import apply_overrides, parse_assignment
from langmarl.core.mappings import describe_parse_error, read_mapping
from langmarl.core.validation import ConfigSource
from langmarl.envs.registry import ENV_REGISTRY, EnvRegistry

__all__ = [
    "apply_overrides",
    "config_from_dict",
    "describe_parse_error",
    "load_config",
    "parse_assignment",
    "read_mapping",
]


def config_from_dict(
    data: dict[str, Any], source: str = "", registry: EnvRegistry | None = None
) -> BaseConfig:
    """Validate ``data`` with the config class registered for its ``env`` (default
    ``language``).

    Raises:
        ConfigError: for an unknown env (with the closest registered name), or naming the
            invalid field, its value and the fix.
    """
    spec = (registry or ENV_REGISTRY).spec(str(data.get("env", "language")))
    return spec.config_class().from_dict(data, source=source)


def load_config(
    path: str | Path,
    overrides: dict[str, Any] | None = None,
    *,
    registry: EnvRegistry | None = None,
) -> BaseConfig:
    """Load a config file, choosing the config class from its ``env`` key.

    Args:
        path: A JSON or YAML file.
        overrides: Dotted keys to values, applied before validation.
        registry: Environment registry to ask for the config class (default: the
            process-wide one).

    Returns:
        A ``BaseConfig`` subclass instance (``LanguageTaskConfig`` for ``env: language``, …).

    Raises:
        ConfigError: naming the invalid field, its value and the fix.
    """
    data = apply_overrides(read_mapping(Path(path)), overrides or {})
    source = ConfigSource(path, overrides or ())  # a --set typo is blamed on --set
    return config_from_dict(data, source=source, registry=registry)


def validate_config(data: dict[str, Any], source: str = "the config") -> None:
    """Check a language run's config as ``langmarl train`` would (the kind's
    :attr:`~langmarl.store.kinds.RunKindSpec.validate_config`).

    Raises:
        ConfigError: naming the invalid field and the fix.
    """
    config_from_dict(data, source=source)
