"""Where runs live: one runs root for every space, and the keys that place a run in it.

Every kind of config (language configs, MAGRPO/IAC/MAAC run files, PARL GRPO files,
Prompt2Policy's ``LoopConfig``) has the same three top-level keys:

- ``runs_dir``: the directory holding runs, default :data:`DEFAULT_RUNS_DIR` (``runs/``,
  relative to the working directory), the one ``langmarl runs``, ``plot``, ``dashboard`` and
  ``jobs`` read by default;
- ``run_id``: the run's directory name inside it (each kind documents its default);
- ``seed``: the run's seed (Prompt2Policy: an int or a list, one training run per seed).

The run directory is ``<runs_dir>/<run_id>``. The names these replace are read for one release,
each with one deprecation line (:func:`langmarl.core.deprecation.deprecated`):

========================= ==================================== ==========================
old name                  config kind                          read as
========================= ==================================== ==========================
``experiment_dir``        language                             ``runs_dir``
``trainer.output_dir=X``  MAGRPO run file                      ``runs_dir=parent(X)``,
``grpo.output_dir=X``     PARL GRPO file                       ``run_id=name(X)``
``trainer.seed``          MAGRPO run file                      ``seed``
``grpo.seed``             PARL GRPO file                       ``seed``
``seeds``                 p2p                                  ``seed``
========================= ==================================== ==========================

An old name that is given wins over the new one beside it, so an old command line
(``--set trainer.output_dir=runs/x``) still does what it did on a config file that now sets
``run_id``; its deprecation line says what it was read as.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Annotated, Any

from pydantic import AfterValidator

from langmarl.core.deprecation import deprecated
from langmarl.core.errors import ConfigError
from langmarl.core.runs_dir import DEFAULT_RUNS_DIR

__all__ = [
    "DEFAULT_RUNS_DIR",
    "RUNS_DIR_MEANING",
    "RUN_DIR_MEANING",
    "SEEDS_MEANING",
    "SEED_MEANING",
    "SHARED_KEYS",
    "RunId",
    "RunsDir",
    "check_run_id",
    "check_runs_dir",
    "read_old_names",
    "take_output_dir",
    "take_renamed",
    "take_section_key",
]

SHARED_KEYS = ("runs_dir", "run_id", "seed")
"""The top-level keys every kind of config has (so they tell no kind from another)."""

RUNS_DIR_MEANING = "`runs_dir` (the directory holding runs)"
RUN_DIR_MEANING = "`runs_dir` and `run_id` (the run directory is <runs_dir>/<run_id>)"
SEED_MEANING = "`seed` (top level)"
SEEDS_MEANING = "`seed` (an int, or a list of ints)"
"""What each old name is replaced by, as its deprecation line says."""


def check_runs_dir(value: str) -> str:
    """``value`` if it names a directory.

    Raises:
        ValueError: for an empty or blank value.
    """
    if not value.strip():
        raise ValueError(
            f"runs_dir {value!r} names no directory: give the directory holding runs, e.g. "
            f"{DEFAULT_RUNS_DIR!r} (the default)"
        )
    return value


def check_run_id(value: str | None) -> str | None:
    """``value`` if it is one directory name (or None).

    Raises:
        ValueError: for an empty name, ``.``/``..``, or a name with a path separator.
    """
    if value is None:
        return value
    if value.strip() in ("", ".", "..") or "/" in value or "\\" in value:
        raise ValueError(
            f"run_id {value!r} must be one directory name (not empty, no '/', not '.' or "
            "'..'): put parent directories in runs_dir, e.g. runs_dir='runs/group', "
            "run_id='seed1'"
        )
    return value


RunsDir = Annotated[str, AfterValidator(check_runs_dir)]
"""A ``runs_dir`` field's type."""
RunId = Annotated[str | None, AfterValidator(check_run_id)]
"""A ``run_id`` field's type (``None``: the kind's default name)."""


def take_renamed(data: Any, old: str, new: str, instead: str) -> Any:
    """``data`` with the deprecated top-level key ``old`` read as ``new`` (one deprecation
    line; ``old`` wins over a ``new`` beside it). Anything but a mapping is returned as is,
    for the model's own validation to report."""
    if not isinstance(data, dict) or old not in data:
        return data
    moved = {key: value for key, value in data.items() if key != old}
    moved[new] = data[old]
    deprecated(old, instead, read_as=f"{new}={data[old]!r}")
    return moved


def take_section_key(data: Any, section: str, key: str, new: str, instead: str) -> Any:
    """``data`` with the deprecated ``<section>.<key>`` read as the top-level ``new`` (one
    deprecation line; it wins over a ``new`` beside it)."""
    part = data.get(section) if isinstance(data, dict) else None
    if not isinstance(part, dict) or key not in part:
        return data
    value = part[key]
    deprecated(f"{section}.{key}", instead, read_as=f"{new}={value!r}")
    rest = {name: item for name, item in part.items() if name != key}
    return {**data, section: rest, new: value}


def take_output_dir(data: Any, section: str) -> Any:
    """``data`` with the deprecated ``<section>.output_dir=X`` read as ``runs_dir=parent(X)``
    and ``run_id=name(X)`` (one deprecation line; they win over ``runs_dir``/``run_id``
    beside them).

    Raises:
        ConfigError: if ``X`` is not a path ending in a directory name.
    """
    part = data.get(section) if isinstance(data, dict) else None
    if not isinstance(part, dict) or "output_dir" not in part:
        return data
    value = part["output_dir"]
    path = PurePath(str(value))
    if not isinstance(value, str) or path.name in ("", ".", ".."):
        raise ConfigError(
            f"{section}.output_dir={value!r} names no run directory: set runs_dir (the "
            "directory holding runs) and run_id (the run's directory name) instead"
        )
    runs_dir, run_id = str(path.parent), path.name
    read_as = f"runs_dir={runs_dir!r}, run_id={run_id!r}"
    deprecated(f"{section}.output_dir", RUN_DIR_MEANING, read_as=read_as)
    rest = {name: item for name, item in part.items() if name != "output_dir"}
    return {**data, section: rest, "runs_dir": runs_dir, "run_id": run_id}


def take_section_placement(data: Any, section: str) -> Any:
    """``data`` with the deprecated ``<section>.output_dir`` and ``<section>.seed`` read as
    ``runs_dir``/``run_id`` and ``seed`` (a MAGRPO run file's ``trainer``, a PARL GRPO
    file's ``grpo``).

    Raises:
        ConfigError: for an ``output_dir`` that names no run directory.
    """
    data = take_output_dir(data, section)
    return take_section_key(data, section, "seed", "seed", SEED_MEANING)


def read_old_names(data: Any) -> Any:
    """``data`` with every old name of the table above read as its new one (one deprecation
    line each), for a caller that places a run without knowing which kind of config it is
    (a job). No kind has another's old names, so reading them all is safe.

    Raises:
        ConfigError: for an ``output_dir`` that names no run directory.
    """
    data = take_renamed(data, "experiment_dir", "runs_dir", RUNS_DIR_MEANING)
    data = take_renamed(data, "seeds", "seed", SEEDS_MEANING)
    for section in ("trainer", "grpo"):
        data = take_section_placement(data, section)
    return data
