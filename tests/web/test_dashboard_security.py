"""Security: the token on every /api route (constant-time, never echoed), the bind rule,
and `langmarl dashboard` refusing a non-loopback address without a token (a real process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from langmarl.core.errors import ConfigError
from langmarl.testing.asgi import live_server
from langmarl.web import create_app
from langmarl.web.security import check_bind

TOKEN = "dashboard-token-1234"
ROUTES = ("/api/runs", "/api/runs/mag", "/api/runs/mag/metrics", "/api/runs/mag/files/run.json",
          "/api/trash", "/api/benchmarks", "/api/runs/nope")  # fmt: skip


def test_every_api_route_needs_the_token(own_runs: Path) -> None:
    client = TestClient(create_app(own_runs, token=TOKEN))
    for route in ROUTES:
        missing = client.get(route)
        assert missing.status_code == 401, route
        assert missing.json()["fix"] == "send the header 'Authorization: Bearer <token>'"
        wrong = client.get(route, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 403 and TOKEN not in wrong.text, route
    assert client.get("/api/runs", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 403
    assert client.delete("/api/runs/mag").status_code == 401
    assert (own_runs / "mag").is_dir()
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/api/runs", headers=good).json()["total"] == 2
    assert client.get("/api/runs/nope", headers=good).status_code == 404
    schema = client.get("/openapi.json")  # the schema holds no run data
    assert schema.status_code == 200 and "/api/runs/{run_id}/metrics" in schema.json()["paths"]
    assert TOKEN not in schema.text


def test_without_a_token_the_api_is_open(own_runs: Path) -> None:
    assert TestClient(create_app(own_runs)).get("/api/runs").status_code == 200


def test_the_bind_rule() -> None:
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("0.0.0.0", TOKEN)
    for weak in (None, "", " " * 20, "short"):
        with pytest.raises(ConfigError, match="--token"):
            check_bind("0.0.0.0", weak)


def _dashboard(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    environ = {k: v for k, v in os.environ.items() if k != "LANGMARL_DASHBOARD_TOKEN"}
    command = [sys.executable, "-m", "langmarl.cli", "dashboard", *args]
    return subprocess.Popen(command, env={**environ, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def test_the_cli_refuses_a_public_address_without_a_token(own_runs: Path) -> None:
    process = _dashboard("--runs-dir", str(own_runs), "--host", "0.0.0.0", "--port", "0")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2, (out, err)
    assert "without a token" in err and "--token" in err and "LANGMARL_DASHBOARD_TOKEN" in err


def test_the_cli_serves_with_a_token_from_the_environment(own_runs: Path) -> None:
    process = _dashboard("--runs-dir", str(own_runs), "--host", "0.0.0.0", "--port", "0",
                         env={"LANGMARL_DASHBOARD_TOKEN": TOKEN})  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert "Dashboard at http://0.0.0.0:" in line, line
        assert line.rstrip().endswith("Ctrl-C stops"), line  # one line in a pipe (issue 42)
        port = int(line.split("http://0.0.0.0:")[1].split("/")[0])
        url = f"http://127.0.0.1:{port}/api/runs"
        assert httpx.get(url, timeout=10).status_code == 401
        response = httpx.get(url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert response.status_code == 200 and response.json()["total"] == 2
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
    assert TOKEN not in line + out + err


def test_a_real_server_checks_the_token(own_runs: Path) -> None:
    with live_server(create_app(own_runs, token=TOKEN)) as url:
        assert httpx.get(f"{url}/api/runs/mag").status_code == 401
        good = httpx.get(f"{url}/api/runs/mag", headers={"Authorization": f"Bearer {TOKEN}"})
        assert good.json()["run"]["kind"] == "magrpo"
