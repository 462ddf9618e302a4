"""Environment variables langmarl reads, validated where they are read.

An empty value counts as unset (``LANGMARL_TORCH_THREADS= langmarl train ...`` is how a
shell unsets a variable for one command); any other value must parse, or a
:class:`~langmarl.core.errors.ConfigError` names the variable, shows the value and says what
to set instead.
"""

from __future__ import annotations

import os

from langmarl.core.errors import ConfigError

THREADS_ENV_VAR = "LANGMARL_TORCH_THREADS"
"""torch threads of the embedded model (default: every core)."""


def env_positive_int(name: str) -> int | None:
    """The positive integer in ``$name``, or None when it is unset or empty.

    Raises:
        ConfigError: if the value is not a positive integer.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(
            f"environment variable {name}={raw!r} is not a positive integer: set it to a "
            f"count such as {name}=2, or unset it (unset {name})"
        )
    return value


CHECKS = {THREADS_ENV_VAR: env_positive_int}
"""The variables :func:`check_environment` validates, with their readers."""


def check_environment() -> None:
    """Validate every variable in :data:`CHECKS` (the CLI calls it before any work).

    Raises:
        ConfigError: for the first invalid one.
    """
    for name, read in CHECKS.items():
        read(name)
