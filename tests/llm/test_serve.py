"""`langmarl serve`: a real server process answering the real `openai` client."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import openai
import pytest

from langmarl.core.errors import ConfigError
from langmarl.llm.serve import check_bind, parse_chat_body

KEY = "serve-test-key"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "langmarl.cli", "serve", "--port", str(port), "--api-key", KEY],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "LANGMARL_TORCH_THREADS": "2"},
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(process.stdout.read().decode() if process.stdout else "")
            try:
                headers = {"Authorization": f"Bearer {KEY}"}
                if httpx.get(f"{base}/models", headers=headers, timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.mark.slow
def test_openai_client_gets_an_answer(server: str) -> None:
    client = openai.OpenAI(base_url=server, api_key=KEY)
    reply = client.chat.completions.create(
        model="SmolLM2-135M-Instruct",
        messages=[{"role": "user", "content": "What is 2+3? Answer with a number."}],
        max_tokens=16,
        temperature=0,
    )
    assert "5" in (reply.choices[0].message.content or "")
    assert reply.usage is not None and reply.usage.completion_tokens > 0
    assert [m.id for m in client.models.list()] == ["SmolLM2-135M-Instruct"]


@pytest.mark.slow
def test_streaming_yields_the_same_text_in_pieces(server: str) -> None:
    client = openai.OpenAI(base_url=server, api_key=KEY)
    messages = [{"role": "user", "content": "List three fruits."}]
    whole = client.chat.completions.create(
        model="m", messages=messages, max_tokens=20, temperature=0
    )
    chunks = list(
        client.chat.completions.create(
            model="m", messages=messages, max_tokens=20, temperature=0, stream=True
        )
    )
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert len([p for p in pieces if p]) > 2
    assert "".join(pieces) == whole.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason in {"stop", "length"}


@pytest.mark.slow
def test_wrong_key_and_bad_body_are_rejected(server: str) -> None:
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=server, api_key="wrong").models.list()
    reply = httpx.post(
        f"{server}/chat/completions",
        json={"messages": []},
        headers={"Authorization": f"Bearer {KEY}"},
    )
    assert reply.status_code == 400 and "messages" in reply.json()["error"]["message"]


def test_non_loopback_bind_needs_a_key() -> None:
    with pytest.raises(ConfigError, match="--api-key"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "k")
    check_bind("127.0.0.1", None)
    check_bind("::1", None)


def test_parse_chat_body_validates_fields() -> None:
    request = parse_chat_body(
        {"messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 7, "stop": "x"}
    )
    assert request.max_tokens == 7 and request.stop == ["x"]
    with pytest.raises(ValueError, match="max_tokens"):
        parse_chat_body({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 0})
