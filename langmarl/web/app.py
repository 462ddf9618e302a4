"""The dashboard's FastAPI app over a runs directory, and the server that runs it.

::

    create_app(runs_dir, token=..., backend=...)   routes under /api (one module per area in
                                                   routes/), OpenAPI at /openapi.json, docs
                                                   at /docs (offline: api_docs), {"error",
                                                   "fix"} errors
    guarded(app, host)                             Host, origin, JSON and size checks first
    serve(runs_dir, host, port, token)             check_bind → bind the socket → guarded
                                                   app in uvicorn

With a token, every ``/api`` route needs ``Authorization: Bearer <token>``; ``/``, ``/docs``
and ``/openapi.json`` hold no run data and stay open.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from langmarl.core.errors import MissingDependencyError

try:
    from fastapi import APIRouter, Depends, FastAPI
except ImportError as exc:  # pragma: no cover - the server extra is missing
    raise MissingDependencyError("fastapi", "server", "The dashboard") from exc

from langmarl.core.http_guard import RequestGuard, allowed_hosts
from langmarl.core.version import __version__
from langmarl.llm.server.api_docs import mount_api_docs
from langmarl.web.defaults import DEFAULT_HOST, DEFAULT_PORT, MAX_BODY_BYTES
from langmarl.web.errors import install_handlers
from langmarl.web.pages import mount_pages
from langmarl.web.routes import (
    bench_options,
    benchmarks,
    catalogs,
    export,
    files,
    iterations,
    jobs,
    language,
    monitor,
    pool,
    resources,
    reward,
    runs,
    sessions,
    stream,
    trash,
    vlm,
    weights,
)
from langmarl.web.security import check_bind, token_guard
from langmarl.web.state import Dashboard

if TYPE_CHECKING:
    from langmarl.jobs.backend import Backend

# bench_options before benchmarks: /benchmarks/options is not a benchmark's id
ROUTE_MODULES = (
    runs, language, pool, weights, reward, bench_options, benchmarks, files, trash, stream, jobs,
    resources, catalogs, export, sessions, vlm, iterations, monitor,
)  # fmt: skip


def create_app(
    runs_dir: str | Path,
    *,
    token: str | None = None,
    backend: Backend | None = None,
    poll_interval: float = 0.5,
) -> FastAPI:
    """The API over ``runs_dir``.

    Args:
        runs_dir: The runs directory (runs of every kind, nested up to three levels).
        token: If set, every ``/api`` route requires ``Authorization: Bearer <token>``.
        backend: The jobs backend (``langmarl.jobs``) behind ``/api/jobs``.
        poll_interval: Seconds between two looks at a streamed run's files.
    """
    app = FastAPI(
        title="langmarl dashboard API",
        version=__version__,
        docs_url=None,  # /docs from packaged assets (api_docs), not a CDN
        redoc_url=None,
        description="Runs of every kind under one runs directory: list, detail, metrics, "
        "events, the spaces' own views, files, metadata, trash, a live stream.",
    )
    app.state.dashboard = Dashboard(Path(runs_dir), backend, poll_interval)
    install_handlers(app)
    guard = [Depends(token_guard(token))] if token else []
    api = APIRouter(prefix="/api", dependencies=guard)
    for module in ROUTE_MODULES:
        api.include_router(module.router)
    app.include_router(api)

    mount_pages(app)
    mount_api_docs(app)
    return app


def guarded(app: FastAPI, host: str) -> RequestGuard:
    """``app`` behind the checks every request meets first (:mod:`langmarl.core.http_guard`):
    a ``Host`` naming this server bound to ``host``, no cross-site state change, JSON bodies
    of at most :data:`MAX_BODY_BYTES`."""
    return RequestGuard(
        app, allowed_hosts(host), lambda _, error, fix: {"error": error, "fix": fix}, MAX_BODY_BYTES
    )


def serve(
    runs_dir: str | Path,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    backend: Backend | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve the dashboard until interrupted (loopback only unless ``token`` is set);
    ``announce`` gets the URL once the port is bound (port 0 picks a free one).

    Raises:
        ConfigError: for a non-loopback host without a token, or an address that cannot
            be bound.
    """
    import uvicorn

    from langmarl.llm.server.config import bind_socket
    from langmarl.llm.server.protocol import uvicorn_config

    check_bind(host, token)
    sock = bind_socket(host, port)
    app = guarded(create_app(runs_dir, token=token, backend=backend), host)
    if announce is not None:
        shown = f"[{host}]" if ":" in host else host
        announce(f"http://{shown}:{sock.getsockname()[1]}")
    uvicorn.Server(uvicorn_config(app)).run(sockets=[sock])
