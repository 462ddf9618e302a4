"""A real OpenAI-compatible HTTP server with scripted behaviour, for tests and benchmarks.

It listens on 127.0.0.1 (a free port) in a background thread. The requested ``model`` picks
the behaviour, so one server can play every fault at once:

- ``ok`` (or any unknown model): answers at once (after ``latency`` seconds);
- ``flaky-429`` / ``flaky-500``: fails twice with that status, then answers;
- ``always-500``, ``always-401``: always fails with that status;
- ``retry-after``: 429 with ``Retry-After: 1`` once, then answers;
- ``hang``: sleeps ``hang_seconds`` before answering (longer than a client's timeout);
- ``garbage``: 200 with a body that is not JSON;
- ``empty``: 200 with ``{"choices": []}``;
- ``no-tools``: 400 for a request that carries ``tools`` (an endpoint without function
  calling), else answers.

A responder that returns a :class:`StubReply` with ``tool_calls`` answers with OpenAI
function calls (``finish_reason`` ``"tool_calls"``, ``content`` null when there is no text).

``hits[model]`` counts the requests per model, so tests can see the retries.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class StubReply:
    """A scripted answer: text and/or function calls as ``(name, arguments)`` pairs."""

    text: str | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


Responder = Callable[[dict[str, Any]], str | StubReply]


class _Server(ThreadingHTTPServer):
    """A client that hung up before its answer (its timeout ran out on ``hang``) is what the
    stub exists to play, not an error: socketserver would print its traceback to whatever
    ``sys.stderr`` is when the answer comes, another test's captured output included."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _completion(reply: str | StubReply, model: str) -> dict[str, Any]:
    reply = reply if isinstance(reply, StubReply) else StubReply(reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(reply.tool_calls)
        ]  # fmt: skip
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


class OpenAIStub:
    """The scripted server. Use as a context manager; ``base_url`` ends in ``/v1``.

    Args:
        latency: Seconds every successful answer waits (models the LLM's latency).
        hang_seconds: How long the ``hang`` model sleeps.
        responder: Builds the reply (text, or a :class:`StubReply`) from the request body
            (default: ``"stub reply"``).
    """

    def __init__(
        self,
        latency: float = 0.0,
        hang_seconds: float = 5.0,
        responder: Responder | None = None,
    ) -> None:
        self.latency = latency
        self.hang_seconds = hang_seconds
        self.responder = responder or (lambda body: "stub reply")
        self.hits: Counter[str] = Counter()
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def llm_config(self, model: str = "ok", **fields: Any) -> dict[str, Any]:
        """An ``LLMConfig`` dict for this server: no key, no retries (override in ``fields``)."""
        base = {"name": "stub", "model_string": model, "base_url": self.base_url}
        return {**base, "requires_api_key": False, "max_retries": 0, **fields}

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _count(self, model: str, body: dict[str, Any]) -> int:
        with self._lock:
            self.hits[model] += 1
            self.bodies.append(body)
            return self.hits[model]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # silence the access log
                pass

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                models = {"object": "list", "data": [{"id": "ok", "object": "model"}]}
                self._send(200, json.dumps(models).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                model = str(body.get("model", "ok"))
                stub._count(model, body)
                stub._respond(self, model, body)

        return Handler

    def _respond(self, handler: Any, model: str, body: dict[str, Any]) -> None:
        hits = self.hits[model]
        error = json.dumps({"error": {"message": f"scripted failure ({model})"}}).encode()
        if model.startswith("flaky-") and hits <= 2:
            handler._send(int(model.removeprefix("flaky-")), error)
        elif model.startswith("always-"):
            handler._send(int(model.removeprefix("always-")), error)
        elif model == "retry-after" and hits == 1:
            handler._send(429, error, {"Retry-After": "1"})
        elif model == "garbage":
            handler._send(200, b"<html>this is not json")
        elif model == "empty":
            handler._send(200, json.dumps({"id": "x", "choices": []}).encode())
        elif model == "no-tools" and "tools" in body:
            handler._send(400, json.dumps({"error": {"message": "tools not supported"}}).encode())
        else:
            time.sleep(self.hang_seconds if model == "hang" else self.latency)
            reply = _completion(self.responder(body), model)
            handler._send(200, json.dumps(reply).encode())


def main() -> None:
    """``python -m langmarl.testing.openai_stub [--latency S]``: serve until killed and print
    the base URL on the first line of stdout (for benchmarks that need a separate process)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    args = parser.parse_args()
    with OpenAIStub(latency=args.latency) as stub:
        print(stub.base_url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
