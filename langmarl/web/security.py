"""Who may reach the API: loopback by default, a Bearer token for anything else.

* :func:`check_bind` refuses a non-loopback address without a token before anything binds
  (anyone on the network could read every run and, with jobs, start processes).
* :func:`token_guard` is the dependency every ``/api`` route carries when a token is set:
  ``Authorization: Bearer <token>``, compared in constant time; a missing header is 401, a
  wrong token 403. The token is never echoed in a response or a log line.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable

from fastapi import Request

from langmarl.core.errors import ConfigError
from langmarl.llm.server.config import MIN_SECRET_CHARS, is_loopback, strong_secret
from langmarl.web.defaults import TOKEN_ENV
from langmarl.web.errors import ApiError


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve the runs beyond this machine without a token.

    Raises:
        ConfigError: for a non-loopback ``host`` and no ``token``.
    """
    if not is_loopback(host) and not strong_secret(token):
        raise ConfigError(
            f"Refusing to serve the dashboard on {host!r} without a token of at least "
            f"{MIN_SECRET_CHARS} characters: anyone on the network could read every run. "
            f"Pass --token T (or set {TOKEN_ENV}), e.g. from `python -c 'import secrets; "
            "print(secrets.token_urlsafe())'`; clients send it as 'Authorization: Bearer T'. "
            "Or bind to 127.0.0.1."
        )


def token_guard(token: str) -> Callable[[Request], None]:
    """A FastAPI dependency admitting only requests that carry ``token``."""
    expected = token.encode()

    def guard(request: Request) -> None:
        header = request.headers.get("authorization")
        if not header:
            raise ApiError(
                401, "this API needs a token", "send the header 'Authorization: Bearer <token>'"
            )
        scheme, _, sent = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(sent.strip().encode(), expected):
            raise ApiError(
                403,
                "the token sent is not the dashboard's token",
                "send the token the dashboard was started with, as 'Authorization: Bearer <token>'",
            )

    return guard
