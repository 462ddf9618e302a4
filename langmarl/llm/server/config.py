"""`ServeConfig`: where `langmarl serve` listens and the limits it puts on every request."""

from __future__ import annotations

import ipaddress
import socket

from pydantic import BaseModel, ConfigDict, Field, model_validator

from langmarl.core.errors import ConfigError

MIB = 1024 * 1024


class ServeConfig(BaseModel):
    """Settings of the OpenAI-compatible server (the CLI's ``serve`` options read these)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    """Address to bind; a non-loopback address needs ``api_key``."""
    port: int = Field(default=8000, ge=0, le=65535)
    """TCP port; 0 picks a free one (printed at start)."""
    api_key: str | None = None
    """If set, every request must send ``Authorization: Bearer <api_key>``."""
    max_body_bytes: int = Field(default=MIB, ge=1024)
    """Largest request body; a larger one gets 413, refused before it is read."""
    max_tokens_cap: int = Field(default=2048, ge=1)
    """Largest ``max_tokens`` a request may ask for (~70 s of generation on one CPU core
    pair); must stay below the model's context of 8192 tokens."""
    default_max_tokens: int | None = Field(default=None, ge=1)
    """``max_tokens`` of a request that sends none (``None``: 256, or ``max_tokens_cap`` if
    that is lower)."""
    max_n: int = Field(default=4, ge=1, le=16)
    """Most choices (``n``) one request may ask for; each is a separate generation."""
    request_timeout_s: float = Field(default=300.0, gt=0)
    """A request's generation stops after this long (504; a stream ends with an error event),
    so a client that waits forever cannot hold the model; one that leaves stops it at once."""
    max_queued: int = Field(default=64, ge=1)
    """Generations waiting for the model beyond which a new request gets 503 (retry later)."""
    model: str | None = None
    """The causal LM to serve (``None``: the embedded SmolLM2): a directory, a weight-space
    checkpoint's agent folder or a hub id (:mod:`langmarl.llm.local.models`)."""

    @model_validator(mode="after")
    def _default_within_cap(self) -> ServeConfig:
        if self.default_max_tokens is not None and self.default_max_tokens > self.max_tokens_cap:
            raise ValueError(
                f"default_max_tokens ({self.default_max_tokens}) exceeds max_tokens_cap "
                f"({self.max_tokens_cap}): lower the default or raise the cap"
            )
        return self

    @property
    def max_tokens_default(self) -> int:
        """The token budget of a request that sends no ``max_tokens``."""
        return self.default_max_tokens or min(256, self.max_tokens_cap)

    def check_context(self, context_length: int) -> None:
        """Refuse a ``max_tokens_cap`` that leaves no room for a prompt in the context.

        Raises:
            ConfigError: if ``max_tokens_cap`` >= ``context_length``.
        """
        if self.max_tokens_cap >= context_length:
            raise ConfigError(
                f"max_tokens_cap {self.max_tokens_cap} leaves no room for the prompt in the "
                f"model's context of {context_length} tokens; set it below {context_length}"
            )


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


MIN_SECRET_CHARS = 8
"""Shortest token or API key that opens a server beyond loopback (spaces do not count)."""


def strong_secret(secret: str | None) -> bool:
    """Whether ``secret`` may guard a server reachable from the network."""
    return secret is not None and len(secret.strip()) >= MIN_SECRET_CHARS


def check_bind(host: str, api_key: str | None) -> None:
    """Refuse to expose the model beyond this machine without an API key.

    Raises:
        ConfigError: for a non-loopback ``host`` with no ``api_key`` of at least
            :data:`MIN_SECRET_CHARS` characters.
    """
    if not is_loopback(host) and not strong_secret(api_key):
        raise ConfigError(
            f"Refusing to serve on {host!r} without an API key of at least "
            f"{MIN_SECRET_CHARS} characters: anyone on the network could use the model. Pass "
            "--api-key KEY (clients send it as a Bearer token), or bind to 127.0.0.1."
        )


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``, made before the model loads.

    Binding first turns "port in use" or "permission denied" into one clear error at once
    instead of a server traceback after the model has loaded.

    Raises:
        ConfigError: naming the address and the reason, if it cannot be bound.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"Cannot serve on {host!r}: {exc}. Pass another --host.") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"Cannot listen on {host}:{port}: {exc.strerror or exc}. Pass another --port "
            "(ports below 1024 need privileges) or stop the process using it."
        ) from None
    return sock
