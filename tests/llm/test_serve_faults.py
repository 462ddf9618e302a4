"""A request failing inside the engine, through a real HTTP server and the embedded model.

The server runs in this process (uvicorn in a thread) so a backend can inject the fault: the
streaming callback of a request saying FAIL raises after its first piece, in the middle of a
batch it shares with good requests.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from langmarl.llm.local.backend import LocalBackend
from langmarl.llm.local.engine import LocalEngine
from langmarl.llm.local.generation import GenJob, TextCallback
from langmarl.llm.presets import preset_config
from langmarl.llm.server import ServeConfig, bind_socket
from langmarl.llm.types import ChatRequest, message_text

pytestmark = pytest.mark.slow

COUNT = "Count from 1 to 10, separated by commas."


def fails_after_first_piece(on_text: TextCallback) -> TextCallback:
    pieces: list[str] = []

    def call(piece: str) -> None:
        if pieces:
            raise RuntimeError("injected fault")
        pieces.append(piece)
        on_text(piece)

    return call


def fails(piece: str) -> None:
    raise RuntimeError("injected fault")


class FaultyBackend(LocalBackend):
    """The embedded model, with a fault in every request that says FAIL: a stream fails
    after its first piece, a plain request at its first piece."""

    def job(
        self, request: ChatRequest, on_text: TextCallback | None = None, truncate: bool = True
    ) -> GenJob:
        job = super().job(request, on_text, truncate)
        if "FAIL" in message_text(request.messages[-1]):
            job.on_text = fails if on_text is None else fails_after_first_piece(on_text)
        return job


@pytest.fixture(scope="module")
def faulty() -> Iterator[tuple[str, LocalEngine]]:
    import uvicorn

    from langmarl.llm.server.app import create_app

    engine = LocalEngine(batch_window=1.0, threads=1).start()  # a wide window: one batch
    sock = bind_socket("127.0.0.1", 0)
    app = create_app(ServeConfig(port=0), FaultyBackend(preset_config("local"), engine))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", engine
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        engine.close()


def ask(text: str, **more: Any) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": text}],
        "max_tokens": 6,
        "temperature": 0,
        **more,
    }


def events(reply: httpx.Response) -> list[str]:
    return [line.removeprefix("data: ") for line in reply.text.splitlines() if line]


def test_a_failed_stream_ends_with_an_error_then_done_and_its_batch_succeeds(
    faulty: tuple[str, LocalEngine],
) -> None:
    base, engine = faulty

    async def send_together() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=base, timeout=120) as client:
            bodies = [ask(f"{COUNT} FAIL", stream=True), ask(COUNT), ask(COUNT, stream=True)]
            return await asyncio.gather(*[client.post("/chat/completions", json=b) for b in bodies])

    before = engine.batches
    failed, plain, streamed = asyncio.run(send_together())
    assert engine.batches - before == 1  # the three shared one batch

    assert failed.status_code == 200  # the stream had started when the fault came
    *chunks, error, done = events(failed)
    assert done == "[DONE]"
    assert json.loads(error)["error"]["type"] == "server_error"
    assert any(json.loads(c)["choices"][0]["delta"].get("content") for c in chunks)

    text = plain.json()["choices"][0]["message"]["content"]
    assert plain.status_code == 200 and text.startswith("1")
    *chunks, done = events(streamed)
    assert done == "[DONE]" and json.loads(chunks[-1])["choices"][0]["finish_reason"]
    assert "".join(json.loads(c)["choices"][0]["delta"].get("content", "") for c in chunks) == text


def test_the_openai_client_raises_the_stream_error(faulty: tuple[str, LocalEngine]) -> None:
    client = openai.OpenAI(base_url=faulty[0], api_key="unused", max_retries=0)
    stream = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": f"{COUNT} FAIL"}],
        max_tokens=6,
        temperature=0,
        stream=True,
    )
    with pytest.raises(openai.APIError, match="failed while generating"):
        list(stream)


def test_a_failed_plain_request_is_a_500_with_a_json_body(faulty: tuple[str, LocalEngine]) -> None:
    reply = httpx.post(f"{faulty[0]}/chat/completions", json=ask(f"{COUNT} FAIL"), timeout=60)
    assert reply.status_code == 500
    assert reply.json()["error"]["type"] == "server_error"
    client = openai.OpenAI(base_url=faulty[0], api_key="unused", max_retries=0)
    with pytest.raises(openai.InternalServerError, match="failed while generating"):
        client.chat.completions.create(model="m", **ask(f"{COUNT} FAIL"))


def test_a_stream_whose_reader_leaves_stops_generating(
    faulty: tuple[str, LocalEngine], caplog: pytest.LogCaptureFixture
) -> None:
    body = ask("Write a long story about a dragon.", stream=True, max_tokens=1000)
    with caplog.at_level(logging.DEBUG, logger="langmarl.llm.local.engine"):
        with httpx.stream("POST", f"{faulty[0]}/chat/completions", json=body) as reply:
            next(reply.iter_lines())  # the stream has started; now hang up
        deadline = time.monotonic() + 60
        while "cancelled by its reader" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.1)
    assert "cancelled by its reader" in caplog.text
