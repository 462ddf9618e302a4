"""`langmarl serve`: the embedded model as an OpenAI-compatible HTTP server.

Endpoints: ``GET /v1/models`` and ``POST /v1/chat/completions`` (with ``stream: true`` as
server-sent events). Requests from every client meet in the engine's batcher, so several
processes (or Ray workers) share one model.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from langmarl.core.errors import ConfigError
from langmarl.llm.local.backend import LocalBackend
from langmarl.llm.local.weights import MODEL_NAME
from langmarl.llm.presets import preset_config
from langmarl.llm.types import ChatRequest

MAX_TOKENS_CAP = 2048


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, api_key: str | None) -> None:
    """Refuse to expose the model beyond this machine without an API key.

    Raises:
        ConfigError: for a non-loopback ``host`` with no ``api_key``.
    """
    if not is_loopback(host) and not api_key:
        raise ConfigError(
            f"Refusing to serve on {host!r} without an API key: anyone on the network could "
            "use the model. Pass --api-key KEY (clients send it as a Bearer token), or bind "
            "to 127.0.0.1."
        )


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": {"message": message, "type": kind}})


def parse_chat_body(body: Any) -> ChatRequest:
    """Validate an OpenAI chat request body.

    Raises:
        ValueError: naming the offending field.
    """
    if not isinstance(body, dict):
        raise ValueError("body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ValueError("'messages' must be a non-empty list")
    for message in messages:
        if not isinstance(message, dict) or "role" not in message:
            raise ValueError("each message needs a 'role' and 'content'")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    max_tokens = 256 if max_tokens is None else max_tokens
    if not isinstance(max_tokens, int) or not 0 < max_tokens <= MAX_TOKENS_CAP:
        raise ValueError(f"'max_tokens' must be an integer in 1..{MAX_TOKENS_CAP}")
    stop = body.get("stop")
    return ChatRequest(
        messages=messages,
        max_tokens=max_tokens,
        temperature=body.get("temperature"),
        top_p=body.get("top_p"),
        seed=body.get("seed"),
        stop=[stop] if isinstance(stop, str) else stop,
    )


def _completion(request_id: str, text: str, finish: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": request_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL_NAME,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish,
            }
        ],
        "usage": usage,
    }


def _chunk(request_id: str, delta: dict[str, str], finish: str | None) -> str:
    payload = {
        "id": request_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_NAME,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload)}\n\n"


async def _stream(
    backend: LocalBackend, request: ChatRequest, request_id: str
) -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    pieces: asyncio.Queue[str] = asyncio.Queue()

    def on_text(piece: str) -> None:
        loop.call_soon_threadsafe(pieces.put_nowait, piece)

    job = await asyncio.to_thread(backend.job, request, on_text)
    done = asyncio.ensure_future(backend.engine.agenerate(job))
    yield _chunk(request_id, {"role": "assistant", "content": ""}, None)
    while not (done.done() and pieces.empty()):
        getter = asyncio.ensure_future(pieces.get())
        finished, _ = await asyncio.wait({getter, done}, return_when=asyncio.FIRST_COMPLETED)
        if getter in finished:
            yield _chunk(request_id, {"content": getter.result()}, None)
        else:
            getter.cancel()
    yield _chunk(request_id, {}, done.result().finish_reason)
    yield "data: [DONE]\n\n"


def create_app(api_key: str | None = None, backend: LocalBackend | None = None) -> FastAPI:
    """The FastAPI app serving the embedded model.

    Args:
        api_key: If set, every request must send ``Authorization: Bearer <api_key>``.
        backend: The backend to serve (default: the shared embedded engine).
    """
    app = FastAPI(title="langmarl embedded model", version="1")
    local = backend or LocalBackend(preset_config("local"))

    @app.middleware("http")
    async def authenticate(request: Request, call_next: Any) -> Any:
        if api_key:
            sent = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if not hmac.compare_digest(sent.encode(), api_key.encode()):
                return _error(401, "invalid or missing API key", "authentication_error")
        return await call_next(request)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        entry = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "langmarl"}
        return {"object": "list", "data": [entry]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        try:
            body = await request.json()
            chat_request = parse_chat_body(body)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            return _error(400, str(exc))
        request_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        if body.get("stream"):
            return StreamingResponse(
                _stream(local, chat_request, request_id), media_type="text/event-stream"
            )
        result = await local.complete(chat_request)
        usage = {
            "prompt_tokens": result.input_tokens,
            "completion_tokens": result.output_tokens,
            "total_tokens": result.input_tokens + result.output_tokens,
        }
        return _completion(request_id, result.text, result.finish_reason, usage)

    return app


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    backend: LocalBackend | None = None,
) -> None:
    """Serve the embedded model until interrupted (loopback only unless ``api_key`` is set)."""
    import uvicorn

    check_bind(host, api_key)
    local = backend or LocalBackend(preset_config("local"))
    local.engine.start()
    uvicorn.run(create_app(api_key, local), host=host, port=port, log_level="warning")
