"""The FastAPI app and :func:`serve`.

Endpoints: ``GET /v1/models`` and ``POST /v1/chat/completions`` (with ``stream: true`` as
server-sent events). A chat request goes through, in order: the API key, the body size, the
JSON and the schema (:mod:`.parsing`), the server's limits, the prompt's tokenization; only
then does it meet the engine's batcher, where requests from every client share one model.
Every error response has the OpenAI shape (:mod:`.errors`). :func:`serve` puts the app behind
:func:`guarded` (the ``Host`` and cross-site checks every langmarl server makes).
"""

from __future__ import annotations

import hmac
import logging
import socket
import uuid
from typing import Any, cast

from fastapi import Depends, FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException

from langmarl.core.http_guard import RequestGuard, allowed_hosts
from langmarl.llm.local.backend import LocalBackend
from langmarl.llm.presets import preset_config
from langmarl.llm.server import parsing, responses
from langmarl.llm.server.api_docs import mount_api_docs
from langmarl.llm.server.config import ServeConfig, bind_socket, check_bind
from langmarl.llm.server.errors import (
    INVALID_REQUEST,
    SERVER_ERROR,
    RequestError,
    error_body,
    server_fault,
)

log = logging.getLogger(__name__)


def local_backend(config: ServeConfig) -> LocalBackend:
    """The backend serving ``config.model`` (default: the embedded model), shared per model."""
    llm = preset_config("local")
    if config.model is not None:
        llm = llm.model_copy(update={"model_string": config.model})
    return LocalBackend(llm)


def _refuse_when_busy(waiting: int, max_queued: int) -> None:
    """503 when ``max_queued`` generations already wait: the client retries later rather than
    queueing behind work it cannot see."""
    if waiting >= max_queued:
        raise RequestError(
            f"The server has {waiting} generations waiting (max_queued {max_queued}): retry "
            "in a few seconds",
            status=503,
            code="server_busy",
            kind=SERVER_ERROR,
        )


def create_app(config: ServeConfig | None = None, backend: LocalBackend | None = None) -> FastAPI:
    """The FastAPI app serving the embedded model.

    Args:
        config: Limits and the API key (default: :class:`ServeConfig`'s defaults).
        backend: The backend to serve (default: the shared embedded engine).
    """
    config = config or ServeConfig()
    local = backend or local_backend(config)

    def authenticate(request: Request) -> None:
        """Every route's first dependency (a dependency, not HTTP middleware, which would
        hide a client's disconnect from the route)."""
        if config.api_key:
            sent = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if not hmac.compare_digest(sent.encode(), config.api_key.encode()):
                raise RequestError(
                    "invalid or missing API key", status=401, kind="authentication_error"
                )

    app = FastAPI(
        title="langmarl local model server", version="1", dependencies=[Depends(authenticate)],
        docs_url=None, redoc_url=None,  # /docs from packaged assets (api_docs), not a CDN
    )  # fmt: skip
    _add_error_handlers(app)
    mount_api_docs(app)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        name = local.engine.model_name
        entry = {"id": name, "object": "model", "created": 0, "owned_by": "langmarl"}
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        raw = await parsing.read_body(request, config.max_body_bytes)
        body = parsing.parse_request(parsing.decode_json(raw, request.headers.get("content-type")))
        parsing.check_limits(body, config)
        chat_requests = parsing.chat_requests(body, config)
        _refuse_when_busy(local.engine.queued(), config.max_queued)
        request_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        stopper = responses.Stopper(config.request_timeout_s)
        sink = responses.StreamSink() if body.stream else None
        jobs = await responses.build_jobs(local, chat_requests, stopper, sink)
        if sink is None:
            return await responses.complete(
                local, jobs, request_id, stopper, request.is_disconnected
            )
        usage = body.stream_options is not None and body.stream_options.include_usage
        events = responses.stream(local, jobs, sink, request_id, stopper, usage)
        return StreamingResponse(events, media_type="text/event-stream")

    return app


def _add_error_handlers(app: FastAPI) -> None:
    """Every error in the OpenAI shape: refusals, routing errors, and server faults (500)."""

    async def refused(_: Request, exc: Exception) -> Response:
        return cast(RequestError, exc).response()  # registered for RequestError only

    async def routing(_: Request, exc: Exception) -> Response:
        http = cast(HTTPException, exc)  # registered for HTTPException only
        body = error_body(str(http.detail), INVALID_REQUEST)
        return JSONResponse(status_code=http.status_code, content=body, headers=http.headers)

    async def fault(_: Request, exc: Exception) -> Response:
        log.error("Unhandled server error", exc_info=exc)
        return server_fault(exc, "handling the request").response()

    app.add_exception_handler(RequestError, refused)
    app.add_exception_handler(HTTPException, routing)
    app.add_exception_handler(Exception, fault)


def serve(
    config: ServeConfig,
    backend: LocalBackend | None = None,
    sock: socket.socket | None = None,
) -> None:
    """Serve the embedded model until interrupted (loopback only unless ``api_key`` is set).

    Args:
        config: Address, key and limits.
        backend: The backend to serve (default: the shared embedded engine).
        sock: A socket already bound by :func:`bind_socket` (default: bind one here).

    Raises:
        ConfigError: for a non-loopback host without a key, an address that cannot be bound,
            or a ``max_tokens_cap`` the model's context cannot hold.
    """
    import uvicorn

    from langmarl.llm.server.protocol import uvicorn_config

    check_bind(config.host, config.api_key)
    sock = sock or bind_socket(config.host, config.port)
    local = backend or local_backend(config)
    config.check_context(local.engine.start().context_length)
    app = guarded(create_app(config, local), config.host)
    uvicorn.Server(uvicorn_config(app)).run(sockets=[sock])


def guarded(app: FastAPI, host: str) -> RequestGuard:
    """``app`` behind a ``Host`` naming this server bound to ``host`` and no cross-site
    request (:mod:`langmarl.core.http_guard`); the body cap is the app's own."""

    def render(status: int, error: str, fix: str) -> dict[str, Any]:
        return error_body(f"{error}: {fix}", INVALID_REQUEST, code=str(status))

    return RequestGuard(app, allowed_hosts(host), render)
