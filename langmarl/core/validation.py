"""Turn pydantic validation errors into messages that name the field, the value and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from langmarl.core.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """Names of the fields of the (nested) model that ``loc`` points into."""
    current: Any = model
    for part in loc:
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        annotation = field.annotation
        args = getattr(annotation, "__args__", ()) or (annotation,)
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        if not models:
            return []
        current = models[0]
    return sorted(getattr(current, "model_fields", {}))


NEAREST = 5
"""Keys an unknown key's message names at most (the closest ones)."""


def _unknown_key(name: str, valid: list[str]) -> str:
    """``unknown key. Did you mean 'x'?``, else the :data:`NEAREST` closest valid keys
    (never the whole list: a config class has dozens)."""
    hint = did_you_mean(name, valid)
    if hint or not valid:
        return f"unknown key.{hint}"
    near = difflib.get_close_matches(name, valid, n=NEAREST, cutoff=0.0)
    return f"unknown key; the nearest of the {len(valid)} valid keys: {', '.join(near)}"


def _shorten(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def config_error(exc: ValidationError, model: type[BaseModel], source: str = "") -> ConfigError:
    """Build one :class:`ConfigError` listing every problem in ``exc``.

    Args:
        exc: The pydantic error.
        model: The model class that was being validated (for "did you mean" on unknown keys).
        source: Where the values came from (a path), for the message header.
    """
    lines = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        field = ".".join(str(p) for p in loc) or "(root)"
        if err["type"] == "extra_forbidden":
            lines.append(f"- {field}: {_unknown_key(str(loc[-1]), _fields_at(model, loc[:-1]))}")
            continue
        message = err["msg"]
        if "input" in err and err["type"] != "missing":
            message += f" (got {_shorten(err['input'])})"
        lines.append(f"- {field}: {message}")
    where = f" in {source}" if source else ""
    return ConfigError(f"Invalid {model.__name__}{where}:\n" + "\n".join(lines))


def validate_model(model: type[M], data: Any, source: str = "") -> M:
    """``data`` validated into ``model``.

    Raises:
        ConfigError: listing every invalid field with its value and the fix
            (:func:`config_error`); ``source`` (a path) is named in the message.
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, model, source) from None
