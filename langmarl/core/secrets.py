"""Keep secrets off disk: find the secret values a run knows, and scrub them from text."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

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
        """Scrub these values too."""
        self.secrets |= {s for s in secrets if s and len(s) >= _MIN_SECRET_LEN}

    def __call__(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text
