"""What langmarl's HTTP servers (the dashboard, ``langmarl serve``) check before any route.

:class:`RequestGuard` is plain ASGI middleware, outermost, so it runs before authentication
and before a body is read:

* **Host.** The ``Host`` header must name this server: a loopback name or the address it is
  bound to. A page on another site that rebinds its own name to 127.0.0.1 (DNS rebinding)
  reaches the port with its own name in ``Host`` and is refused. Bound to a wildcard address
  (``0.0.0.0``, ``::``; a token is then required), any name is accepted: the token guards.
* **Cross-site state changes.** ``POST``, ``PUT``, ``PATCH`` and ``DELETE`` are refused when
  the browser says they come from another origin (``Origin`` not this ``Host``, or
  ``Sec-Fetch-Site`` cross-site / same-site). Browsers send ``Origin`` on every such request,
  ``no-cors`` ones included; clients that are not browsers send neither and pass.
* **JSON bodies.** Such a request with a body must be ``application/json``: a cross-site page
  can send ``text/plain`` or a form without asking first, JSON only after a CORS preflight
  that these servers never grant.
* **Body size.** A declared ``Content-Length`` over the cap is refused before anything is
  read; a body without one is counted as it arrives and refused once over.

The last two are the dashboard's; the model server checks its bodies itself, naming the field.

Refusals are JSON in the server's own error shape (``render``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
Render = Callable[[int, str, str], dict[str, Any]]
"""``(status, what went wrong, how to fix it)`` -> the JSON body of a refusal."""

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})


def allowed_hosts(bound: str) -> frozenset[str] | None:
    """The names a request's ``Host`` may carry for a server bound to ``bound``: loopback
    names and ``bound`` itself; ``None`` (any) for a wildcard address."""
    if bound in WILDCARDS:
        return None
    return LOOPBACK_NAMES | {_bare(bound)}


def _bare(host: str) -> str:
    """``host`` without port or IPv6 brackets, lower case: ``[::1]:80`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    if host.count(":") == 1:  # name:port; a bare IPv6 address has several colons
        return host.split(":")[0]
    return host


class RequestGuard:
    """ASGI middleware: Host allow-list, no cross-site state changes, JSON bodies, a body cap.

    Args:
        app: The ASGI app behind the guard.
        hosts: Allowed ``Host`` names (:func:`allowed_hosts`); ``None`` admits any.
        render: Builds a refusal's JSON body in the server's error shape.
        max_body_bytes: Largest request body; ``None`` when the app holds its bodies to JSON
            and a size itself (the model server, whose refusals name the field).
    """

    def __init__(
        self,
        app: App,
        hosts: frozenset[str] | None,
        render: Render,
        max_body_bytes: int | None = None,
    ) -> None:
        self.app, self.hosts, self.render = app, hosts, render
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope["method"], headers)
        if refusal is not None:
            await self._refuse(send, *refusal)
            return
        if self.max_body_bytes is not None and scope["method"] in UNSAFE_METHODS:
            bounded = await self._bounded(receive, send)
            if bounded is None:
                return
            receive = bounded
        await self.app(scope, receive, send)

    def _refusal(self, method: str, headers: dict[str, str]) -> tuple[int, str, str] | None:
        host = headers.get("host", "")
        if self.hosts is not None and _bare(host) not in self.hosts:
            return (
                400,
                f"Host {host!r} is not a name of this server (a page on another site may have "
                "pointed its own name at this machine)",
                f"open it as http://127.0.0.1 or one of: {', '.join(sorted(self.hosts))}",
            )
        if method not in UNSAFE_METHODS:
            return None
        origin, site = headers.get("origin"), headers.get("sec-fetch-site", "")
        if (origin is not None and urlsplit(origin).netloc.lower() != host.lower()) or site in (
            "cross-site",
            "same-site",
        ):
            return (
                403,
                f"a {method} from another origin ({origin or site}) is refused: pages on other "
                "sites cannot change anything here",
                "send it from this server's own page, or from a client that is not a browser",
            )
        if self.max_body_bytes is None:
            return None
        declared = headers.get("content-length", "0")
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if (declared != "0" or "transfer-encoding" in headers) and media != "application/json":
            return (
                415,
                f"a {method} body must be JSON, not {media or 'untyped'}",
                "send it with 'Content-Type: application/json'",
            )
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            return self._too_large()
        return None

    def _too_large(self) -> tuple[int, str, str]:
        return (
            413,
            f"the request body is over {self.max_body_bytes:,} bytes",
            "send a smaller body (a job's config inline, or a path to it)",
        )

    async def _bounded(self, receive: Receive, send: Send) -> Receive | None:
        """The body read here, at most the cap (``None`` once refused), replayed to the app."""
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client left; the app sees the disconnect below
            chunk = message.get("body", b"")
            size += len(chunk)
            if self.max_body_bytes is not None and size > self.max_body_bytes:
                await self._refuse(send, *self._too_large())
                return None
            chunks.append(chunk)
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay

    async def _refuse(self, send: Send, status: int, error: str, fix: str) -> None:
        payload = json.dumps(self.render(status, error, fix)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
