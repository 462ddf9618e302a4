"""The VLM proxy (``/api/vlm/status``, ``/api/vlm/api/tags``, ``/api/vlm/api/chat``) over a
live dashboard with a token, forwarding to a tiny Ollama-shaped HTTP stub (issue 42, item 7):
the configured model's status, its tag list, a chat turn with an image; the key goes
upstream and never comes back; no VLM configured, or one that does not answer, is said so."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from langmarl.testing.asgi import live_server
from langmarl.web import create_app
from langmarl.web.routes.vlm import VLM_ENV

KEY = "sk-vlm-secret-98765"
TOKEN = "dash-token-1234"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class OllamaStub:
    """``GET /api/tags`` and ``POST /api/chat`` as Ollama answers them; records requests.
    The chat reply repeats the Authorization header it got (a leaky upstream)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any], str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, data: Any) -> None:
                body = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                stub.requests.append((self.path, {}, self.headers.get("Authorization", "")))
                if self.path != "/api/tags":
                    return self._send(404, {"error": "not found"})
                self._send(200, {"models": [{"name": "llava:latest", "size": 4_700_000_000}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                auth = self.headers.get("Authorization", "")
                stub.requests.append((self.path, body, auth))
                if body.get("model") == "missing":
                    return self._send(404, {"error": f"model 'missing' not found ({auth})"})
                reply = f"I see {len(body['messages'][-1].get('images', []))} image(s); {auth}"
                self._send(200, {"model": body["model"], "done": True,
                                 "message": {"role": "assistant", "content": reply}})  # fmt: skip

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def ollama() -> Iterator[OllamaStub]:
    stub = OllamaStub()
    stub.thread.start()
    yield stub
    stub.server.shutdown()
    stub.server.server_close()


def _configure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    config = {"name": "judge-vlm", "model_string": "llava", "base_url": base_url,
              "api_key_env_var": "VLM_TEST_KEY", "is_multimodal": True}  # fmt: skip
    (tmp_path / "vlm.json").write_text(json.dumps(config))
    monkeypatch.setenv(VLM_ENV, str(tmp_path / "vlm.json"))
    monkeypatch.setenv("VLM_TEST_KEY", KEY)


def test_status_tags_and_chat_go_through_to_the_endpoint(tmp_path, monkeypatch, ollama) -> None:
    _configure(tmp_path, monkeypatch, ollama.base_url)
    with live_server(create_app(tmp_path / "runs", token=TOKEN)) as url:
        assert httpx.get(f"{url}/api/vlm/status", timeout=30).status_code == 401
        status = httpx.get(f"{url}/api/vlm/status", headers=AUTH, timeout=30)
        assert status.status_code == 200, status.text
        assert status.json() == {
            "configured": True, "setting": VLM_ENV, "name": "judge-vlm", "model": "llava",
            "endpoint": ollama.base_url.removesuffix("/v1"), "multimodal": True,
            "api_key_env_var": "VLM_TEST_KEY", "reachable": True, "models": ["llava:latest"],
            "error": None, "model_available": True,
        }  # fmt: skip
        tags = httpx.get(f"{url}/api/vlm/api/tags", headers=AUTH, timeout=30).json()
        assert tags["models"][0]["name"] == "llava:latest"
        ask = {"messages": [{"role": "user", "content": "What moves?", "images": ["aGk="]}]}
        chat = httpx.post(f"{url}/api/vlm/api/chat", json=ask, headers=AUTH, timeout=30)
        assert chat.status_code == 200, chat.text
        assert chat.json()["message"]["content"].startswith("I see 1 image(s); Bearer ")
        missing = httpx.post(f"{url}/api/vlm/api/chat", json={**ask, "model": "missing"},
                             headers=AUTH, timeout=30)  # fmt: skip
        assert missing.status_code == 502 and "model 'missing' not found" in missing.text
        for response in (status, chat, missing):
            assert KEY not in response.text
        paths = httpx.get(f"{url}/openapi.json", timeout=30).json()["paths"]
        assert {"/api/vlm/status", "/api/vlm/api/tags", "/api/vlm/api/chat"} <= set(paths)
    path, body, auth = ollama.requests[-2]
    assert (path, body["model"], body["stream"], auth) == ("/api/chat", "llava", False,
                                                           f"Bearer {KEY}")  # fmt: skip
    assert body["messages"][0]["images"] == ["aGk="]


def test_no_vlm_or_an_unreachable_one_is_said_so(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv(VLM_ENV, raising=False)
    with live_server(create_app(tmp_path / "runs")) as url:
        status = httpx.get(f"{url}/api/vlm/status", timeout=30).json()
        assert (status["configured"], status["setting"]) == (False, VLM_ENV)
        chat = httpx.post(f"{url}/api/vlm/api/chat", json={"messages": [{"role": "user"}]},
                          timeout=30)  # fmt: skip
        assert chat.status_code == 503 and VLM_ENV in chat.json()["fix"]
        _configure(tmp_path, monkeypatch, "http://127.0.0.1:9/v1")  # nothing listens there
        status = httpx.get(f"{url}/api/vlm/status", timeout=30).json()
        assert (status["configured"], status["reachable"]) == (True, False)
        assert "did not answer" in status["error"] and KEY not in json.dumps(status)
        tags = httpx.get(f"{url}/api/vlm/api/tags", timeout=30)
        assert tags.status_code == 502 and "ollama serve" in tags.json()["fix"]
