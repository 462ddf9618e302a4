"""An ASGI app (the dashboard, the model server) in a real uvicorn on a free loopback port,
for tests and benchmarks that must go through HTTP."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from langmarl.llm.server.config import bind_socket
from langmarl.testing.processes import wait_until


@contextlib.contextmanager
def live_server(app: Any) -> Iterator[str]:
    """``app`` served by a real uvicorn on a free loopback port; yields its base URL."""
    import uvicorn

    from langmarl.llm.server.protocol import uvicorn_config

    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn_config(app))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, timeout_s=30, what="the server to start")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
