"""How langmarl's servers run in uvicorn: one place for the settings both servers (the
dashboard, ``langmarl serve``) and the test harness share.

uvicorn closes a kept-alive connection that stays idle (``timeout_keep_alive``) but waits
forever for the headers of a request that never completes: 300 half-sent requests stayed
open indefinitely. :class:`HeaderDeadline` closes a connection whose request headers are not
complete :data:`HEADER_TIMEOUT_S` after it opened or after its request began.
"""

from __future__ import annotations

import asyncio
from typing import Any

HEADER_TIMEOUT_S = 10.0
"""Seconds a client has to send a request's headers."""


def _protocol() -> Any:
    """uvicorn's httptools protocol with a header deadline (``"auto"`` without httptools)."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError:  # pragma: no cover - httptools is part of the server extra
        return "auto"

    class HeaderDeadline(HttpToolsProtocol):
        """Closes the connection when request headers come too slowly."""

        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._timer = self.loop.call_later(HEADER_TIMEOUT_S, self.transport.close)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    return HeaderDeadline


def uvicorn_config(app: Any) -> Any:
    """The ``uvicorn.Config`` every langmarl server runs ``app`` with."""
    import uvicorn

    return uvicorn.Config(app, log_level="warning", http=_protocol())
