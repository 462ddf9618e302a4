"""What a real `langmarl dashboard` refuses before any route (issue 26, findings 2, 3, 5):
a Host that is not its own name (DNS rebinding), state changes from another origin, bodies
that are not JSON, and a body over the cap, all without a token and before authentication."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from langmarl.core.http_guard import _bare, allowed_hosts
from langmarl.testing.processes import rss_mb


@dataclass
class Dashboard:
    url: str
    port: int
    runs: Path
    process: subprocess.Popen[str]

    def rss_mb(self) -> float:
        return rss_mb(self.process.pid)


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    runs = tmp_path_factory.mktemp("guarded") / "runs"
    runs.mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "LANGMARL_DASHBOARD_TOKEN"}
    command = [sys.executable, "-m", "langmarl.cli", "dashboard", "--runs-dir", str(runs),
               "--port", "0"]  # fmt: skip
    process = subprocess.Popen(command, env=environ, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert match, f"the dashboard did not announce its address: {line!r}"
        yield Dashboard(match.group(0), int(match.group(1)), runs, process)
    finally:
        process.terminate()
        process.wait(timeout=30)


def _refused(response: httpx.Response, status: int, says: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert says in body["error"] and body["fix"], body


def test_a_host_that_is_not_the_servers_name_is_refused(dashboard: Dashboard) -> None:
    """DNS rebinding: the attacker's page reaches 127.0.0.1 under its own name; its job would
    send a secret of the dashboard's environment to the attacker's base_url."""
    job = {"kind": "language", "config": {"llm": {"base_url": "http://evil.example/v1",
                                                  "api_key_env_var": "HOME"}}}  # fmt: skip
    rebound = {
        "Host": f"evil.example:{dashboard.port}",
        "Origin": f"http://evil.example:{dashboard.port}",
    }
    _refused(httpx.post(f"{dashboard.url}/api/jobs", json=job, headers=rebound), 400, "Host")
    _refused(httpx.get(f"{dashboard.url}/api/runs", headers=rebound), 400, "evil.example")
    assert not (dashboard.runs / ".jobs").exists() or not list((dashboard.runs / ".jobs").iterdir())
    for name in ("127.0.0.1", "localhost"):
        own = httpx.get(f"{dashboard.url}/api/runs", headers={"Host": f"{name}:{dashboard.port}"})
        assert own.status_code == 200, (name, own.text)


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/api/jobs/j1/cancel"), ("POST", "/api/trash/t1/restore"),
     ("DELETE", "/api/runs/r1"), ("PATCH", "/api/runs/r1/metadata")],
)  # fmt: skip
def test_state_changes_from_another_origin_are_refused(
    dashboard: Dashboard, method: str, path: str
) -> None:
    url = f"{dashboard.url}{path}"
    cross = httpx.request(method, url, headers={"Origin": "http://evil.example"})
    _refused(cross, 403, "another origin")
    fetched = httpx.request(method, url, headers={"Sec-Fetch-Site": "cross-site"})
    _refused(fetched, 403, "another origin")
    # a cross-site "simple" request: text/plain needs no preflight, so it must not pass either
    plain = httpx.request(method, url, content=b"{}", headers={"Content-Type": "text/plain"})
    _refused(plain, 415, "must be JSON")
    # the dashboard's own page (same origin, JSON) reaches the route: 404, nothing of that id
    own = {"Origin": dashboard.url, "Sec-Fetch-Site": "same-origin"}
    body = {"alias": "x"} if method == "PATCH" else None
    assert httpx.request(method, url, json=body, headers=own).status_code == 404


def test_a_large_unauthenticated_body_is_refused_before_it_is_read(dashboard: Dashboard) -> None:
    before = dashboard.rss_mb()
    head = (f"POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1:{dashboard.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {200 << 20}\r\n\r\n")  # fmt: skip
    with socket.create_connection(("127.0.0.1", dashboard.port), timeout=10) as sock:
        sock.sendall(head.encode())  # and not one byte of the body
        assert sock.recv(4096).startswith(b"HTTP/1.1 413")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        for _ in range(64):
            yield b" " * (1 << 20)
            time.sleep(0.001)

    try:
        reply = httpx.post(f"{dashboard.url}/api/jobs", content=chunks(),
                           headers={"Content-Type": "application/json"}, timeout=60)  # fmt: skip
        _refused(reply, 413, "over")
    except httpx.TransportError:
        pass  # refused and closed while the body was still being sent
    assert dashboard.rss_mb() - before < 32  # the 64 MB never accumulated
    assert httpx.get(f"{dashboard.url}/api/runs").status_code == 200  # still serving


def test_which_hosts_are_this_servers_names() -> None:
    assert allowed_hosts("127.0.0.1") == {"localhost", "127.0.0.1", "::1"}
    assert "box.lan" in (allowed_hosts("box.lan") or ())
    assert allowed_hosts("0.0.0.0") is None and allowed_hosts("::") is None  # token-guarded
    assert [_bare(h) for h in ("[::1]:80", "LocalHost:8765", "::1", "a.b")] == [
        "::1", "localhost", "::1", "a.b"]  # fmt: skip
    assert json.dumps(sorted(allowed_hosts("::1") or ())) == '["127.0.0.1", "::1", "localhost"]'


def test_half_sent_requests_are_closed(dashboard: Dashboard) -> None:
    """Issue 26, finding 13: 300 half-sent requests stayed open indefinitely."""
    from langmarl.llm.server.protocol import HEADER_TIMEOUT_S

    socks = [socket.create_connection(("127.0.0.1", dashboard.port), timeout=10 * HEADER_TIMEOUT_S)
             for _ in range(20)]  # fmt: skip
    try:
        for sock in socks:
            sock.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never ends
        for sock in socks:
            assert sock.recv(4096) == b""  # closed by the server (a timeout here would raise)
    finally:
        for sock in socks:
            sock.close()
    assert httpx.get(f"{dashboard.url}/api/runs").status_code == 200
