"""Entry points: an object, or the ``"package.module:attr"`` string naming it, imported on
first use. Registries (environments, kinds of run) keep them so a lower layer can name code
of a higher one without importing it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from langmarl.core.errors import ConfigError

EntryPoint = str | Callable[..., Any]


def load_entry_point(entry_point: EntryPoint, what: str) -> Any:
    """``entry_point`` itself, or the object a ``"package.module:attr"`` string names.

    Raises:
        ConfigError: naming ``what`` and the string when the import or attribute fails.
    """
    if not isinstance(entry_point, str):
        return entry_point
    module_name, _, attr = entry_point.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{what} cannot be loaded from {entry_point!r}: {exc}") from exc
