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


class ConfigSource(str):
    """Where a config's values came from: a file's path (the string itself), plus the dotted
    keys that ``--set`` (or a call's keyword overrides) put over it. It passes wherever a
    source path does, so the loaders need no new parameter; :func:`config_error` then blames
    a wrong key or value on ``--set`` when that is where it came from, not on the file."""

    overridden: frozenset[str]

    def __new__(cls, path: object, overrides: Iterable[str] = ()) -> ConfigSource:
        made = super().__new__(cls, str(path))
        made.overridden = frozenset(overrides)
        return made


def _given_with_set(loc: tuple[int | str, ...], source: str) -> bool:
    """Whether the value at ``loc`` (or a mapping above it) was given with ``--set``."""
    overridden = source.overridden if isinstance(source, ConfigSource) else frozenset()
    parts = [str(p) for p in loc]
    return any(".".join(parts[:n]) in overridden for n in range(1, len(parts) + 1))


def config_error(
    exc: ValidationError, model: type[BaseModel], source: str = "", at: str = ""
) -> ConfigError:
    """Build one :class:`ConfigError` listing every problem in ``exc``.

    Args:
        exc: The pydantic error.
        model: The model class that was being validated (for "did you mean" on unknown keys).
        source: Where the values came from (a path, or a :class:`ConfigSource`), for the
            message header.
        at: The dotted section of the file ``model`` was validated from (``"trainer"``):
            fields are named from the file's top (``trainer.max_steps``).
    """
    lines, from_set = [], False
    for err in exc.errors():
        loc = tuple(err["loc"])
        base = (*at.split("."), *loc) if at else loc
        for named, message in _problems(err, model, base):
            field = ".".join(str(p) for p in named) or "(root)"
            if _given_with_set(named, source):
                field, from_set = f"--set {field}", True
            lines.append(f"- {field}: {message}")
    where = f" in {source}" if source else ""
    if from_set:
        where = f" (--set over {source})" if source else " (--set)"
    return ConfigError(f"Invalid {model.__name__}{where}:\n" + "\n".join(lines))


def _problems(
    err: Any, model: type[BaseModel], named: tuple[int | str, ...]
) -> list[tuple[tuple[int | str, ...], str]]:
    """What one pydantic error says, as (field path from the file's top, message) pairs. A
    nested config validated by a field validator (an LLM given as a dict) raised its own
    :func:`config_error`: its lines are named from the outer field (``llm.temperature``)
    instead of one "Value error" line quoting the whole mapping."""
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        return [(named, _unknown_key(str(loc[-1]), _fields_at(model, loc[:-1])))]
    inner = (err.get("ctx") or {}).get("error")
    if isinstance(inner, ConfigError) and str(inner).startswith("Invalid "):
        header, *lines = str(inner).splitlines()
        nested = [line[2:].partition(": ") for line in lines]
        # a model-level validator (no field of its own) keeps the place its header names
        where = header.rstrip(":").partition(" in ")[2]
        outer = named or ((where,) if where else ())
        if nested and all(line[1] for line in nested):
            return [((*outer, *sub.split(".")), text) for sub, _, text in nested]
    message = err["msg"]
    if "input" in err and err["type"] != "missing":
        message += f" (got {_shorten(err['input'])})"
    return [(named, message)]


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
