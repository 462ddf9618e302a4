"""Keep secrets off disk and out of logs: find the secret values a run knows, and scrub them.

One path serves every space. A run builds one :class:`Redactor` from
:func:`environment_secrets` and :func:`llm_secrets` of its LLM configs;

* its files go through the redactor before they are written (:meth:`Redactor.write_text`,
  :meth:`Redactor.write_json`; the language-space store calls the redactor on every write);
* while it runs, :func:`redacting_logs` puts a :class:`RedactingFilter` with the same
  redactor on the log handlers, so no handler prints a secret (a model that echoes its key
  into a reply that ends up in a log line included);
* the CLI installs a filter for the environment's secrets for the whole process
  (:func:`install_log_redaction`), which also covers third-party loggers.

Secrets are matched as exact substrings, both raw and as JSON escapes them; values shorter
than 8 characters are ignored, as they would scrub ordinary words.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langmarl.core.files import atomic_write_text

REDACTED = "[REDACTED]"
_SECRET_NAME = re.compile(r"(API_KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_MIN_SECRET_LEN = 8  # shorter values would scrub ordinary words


def environment_secrets(environ: dict[str, str] | None = None) -> set[str]:
    """Values of environment variables whose names look secret (``*_API_KEY``, ``*TOKEN*``,
    ``*SECRET*``, ``*PASSWORD*``)."""
    env = os.environ if environ is None else environ
    return {
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET_LEN
    }


def llm_secrets(llm_configs: Iterable[Any]) -> set[str]:
    """API keys held by ``LLMConfig`` objects or named by their ``api_key_env_var``."""
    found: set[str] = set()
    for config in llm_configs:
        if config is None:
            continue
        key = getattr(config, "api_key", None)
        if key is not None:
            found.add(key.get_secret_value() if hasattr(key, "get_secret_value") else str(key))
        env_var = getattr(config, "api_key_env_var", None)
        if env_var and os.environ.get(env_var):
            found.add(os.environ[env_var])
    return {value for value in found if len(value) >= _MIN_SECRET_LEN}


class Redactor:
    """Replaces every known secret value in text with ``[REDACTED]``.

    Args:
        secrets: Secret values to scrub (values shorter than 8 characters are ignored).
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets: set[str] = set()
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Scrub these values too (and their JSON-escaped forms, as written in JSON files)."""
        for secret in secrets:
            if secret and len(secret) >= _MIN_SECRET_LEN:
                self.secrets.add(secret)
                self.secrets.add(json.dumps(secret)[1:-1])
                self.secrets.add(json.dumps(secret, ensure_ascii=False)[1:-1])

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def dumps(self, data: Any) -> str:
        """``data`` as indented JSON text, secrets scrubbed."""
        return self(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")

    def write_text(self, path: Path, text: str) -> None:
        """Write ``text`` to ``path`` atomically, secrets scrubbed."""
        atomic_write_text(path, self(text))

    def write_json(self, path: Path, data: Any) -> None:
        """Write ``data`` as indented JSON to ``path`` atomically, secrets scrubbed."""
        atomic_write_text(path, self.dumps(data))


class RedactingFilter(logging.Filter):
    """A logging filter that scrubs its redactor's secrets from every record and drops none.

    The message is rendered with its arguments first (a secret may sit in either); when it
    holds a secret it is stored scrubbed with no arguments left. The exception text and the
    stack are scrubbed too.
    On a handler it covers every record that handler prints, whichever logger made it.
    """

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.redact.secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: the handler reports it, not us
            return True
        clean = self.redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            clean = self.redact(record.exc_text)
            if clean != record.exc_text:  # no formatter may render the raw exception again
                record.exc_text, record.exc_info = clean, None
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


_TRACEBACKS = logging.Formatter()


def install_log_redaction(redact: Redactor, logger: logging.Logger | None = None) -> None:
    """From now on, every handler of ``logger`` (the root logger by default) scrubs
    ``redact``'s secrets. Installing the same secrets twice adds no second filter."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(
            isinstance(f, RedactingFilter) and redact.secrets <= f.redact.secrets
            for f in handler.filters
        ):
            handler.addFilter(RedactingFilter(redact))


@contextmanager
def redacting_logs(redact: Redactor, logger: logging.Logger | None = None) -> Iterator[None]:
    """While inside, every handler of ``logger`` (the root logger by default) scrubs
    ``redact``'s secrets; so does the last-resort handler Python uses when none is set up.
    The filters are removed on exit, so a run's secrets do not outlive it."""
    handlers = [*(logger or logging.getLogger()).handlers, logging.lastResort]
    log_filter = RedactingFilter(redact)
    for handler in handlers:
        if handler is not None:
            handler.addFilter(log_filter)
    try:
        yield
    finally:
        for handler in handlers:
            if handler is not None:
                handler.removeFilter(log_filter)
