"""``POST /api/sessions`` and ``POST /api/sessions/{id}/stop`` over a live server (issue 42,
item 7): a session started as a job over the API, and one started by the real ``langmarl
p2p run`` command in another process, are both stopped over the API and end ``cancelled``
truthfully; a session that is not running is refused (409) and nothing is signalled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from langmarl.jobs import LocalBackend
from langmarl.store.run import RunDir
from langmarl.testing.asgi import live_server
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.processes import wait_until
from langmarl.web import create_app

TINY = {"env_id": "InvertedPendulum-v5", "max_iterations": 1, "elaborate": False,
        "review": False, "code_judge": False, "max_fix_attempts": 0, "total_timesteps": 256,
        "max_parallel": 1, "analyze": False}  # fmt: skip


def _running(run_dir: Path) -> bool:
    """Whether the session's run says it runs and its process holds the run's lock."""
    info = RunDir(run_dir).read() if (run_dir / "run.json").is_file() else None
    lock = run_dir / ".lock"
    held = lock.is_file() and lock.read_text().strip() == str((info or {}).get("pid"))
    return bool(info) and info.get("status") == "running" and held


def _ended(run_dir: Path) -> dict[str, Any]:
    record = RunDir(run_dir).record()
    return {"status": record.status, "outcome": getattr(record, "outcome", None)}


def test_the_session_routes_are_documented_and_check_their_input(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with live_server(create_app(runs, backend=LocalBackend(runs))) as url:
        paths = httpx.get(f"{url}/openapi.json", timeout=30).json()["paths"]
        assert "post" in paths["/api/sessions"]
        assert "post" in paths["/api/sessions/{session_id}/stop"]
        bad = httpx.post(f"{url}/api/sessions", json={"intent": "x",
                         "config": {"max_iterations": 0}}, timeout=30)  # fmt: skip
        assert bad.status_code == 422 and "max_iterations" in bad.json()["error"], bad.text
        empty = httpx.post(f"{url}/api/sessions", json={"config": {}}, timeout=30)
        assert empty.status_code == 422 and "intent" in empty.json()["error"]
        outside = httpx.post(f"{url}/api/sessions", json={"intent": "x",
                             "config": {"check": "/etc/passwd"}}, timeout=30)  # fmt: skip
        assert outside.status_code == 422 and "outside" in outside.json()["error"]
        missing = httpx.post(f"{url}/api/sessions/nope/stop", timeout=30)
        assert missing.status_code == 404 and "no session" in missing.json()["error"]
    assert not list(runs.glob("*/run.json"))  # nothing started


def test_a_session_started_over_the_api_is_stopped_and_ends_cancelled(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    backend = LocalBackend(runs, max_cpus=1)
    with live_server(create_app(runs, backend=backend)) as url:
        body = {"intent": "balance the pole", "config": TINY, "seed": 3, "name": "api"}
        response = httpx.post(f"{url}/api/sessions", json=body, timeout=60)
        assert response.status_code == 201, response.text
        started = response.json()
        session_id = started["session_id"]
        assert session_id == started["job_id"] and session_id.startswith("api-")
        run_dir = Path(started["run_dir"])
        assert run_dir == runs / session_id and started["state"] in ("queued", "running")
        wait_until(lambda: _running(run_dir), what="the session's run")
        stopped = httpx.post(f"{url}/api/sessions/{session_id}/stop", timeout=60)
        assert stopped.status_code == 200, stopped.text
        assert (stopped.json()["via"], stopped.json()["stop_requested"]) == ("job", True)
        job = backend.wait(session_id, timeout_s=120)
        assert job.state == "cancelled"
        assert _ended(run_dir) == {"status": "cancelled", "outcome": "cancelled"}
        again = httpx.post(f"{url}/api/sessions/{session_id}/stop", timeout=60)
        assert again.status_code == 409 and "cancelled" in again.json()["error"]
        run = httpx.get(f"{url}/api/runs/{session_id}", timeout=60).json()["run"]
        assert (run["kind"], run["status"]) == ("p2p", "cancelled")


def test_a_session_started_by_the_command_is_stopped_over_the_api(tmp_path: Path) -> None:
    """``langmarl p2p run`` in its own process, waiting on an LLM that does not answer: the
    route finds its process from run.json and the run's lock, SIGTERMs it, and the command
    records the session ``cancelled`` itself."""
    runs = tmp_path / "runs"
    (runs / "other").mkdir(parents=True)
    RunDir(runs / "other").start("magrpo", total_steps=1)  # a live run of another kind
    with OpenAIStub(hang_seconds=300) as stub, live_server(create_app(runs)) as url:
        llm = tmp_path / "llm.json"
        llm.write_text(json.dumps(stub.llm_config(model="hang", timeout=600, max_retries=0)))
        config = tmp_path / "session.json"
        config.write_text(json.dumps({**TINY, "runs_dir": str(runs), "run_id": "cli"}))
        command = [sys.executable, "-m", "langmarl.cli", "p2p", "run", "balance the pole",
                   "--config", str(config), "--llm", str(llm)]  # fmt: skip
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   env=env)  # fmt: skip
        try:
            wait_until(lambda: _running(runs / "cli") and stub.hits["hang"] > 0, process,
                       what="the session waiting on its LLM")  # fmt: skip
            other = httpx.post(f"{url}/api/sessions/other/stop", timeout=30)
            assert other.status_code == 404 and "magrpo run" in other.json()["error"]
            stopped = httpx.post(f"{url}/api/sessions/cli/stop", timeout=30)
            assert stopped.status_code == 200, stopped.text
            assert (stopped.json()["via"], stopped.json()["pid"]) == ("signal", process.pid)
            _, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode != 0, stderr[-2000:]
        assert _ended(runs / "cli") == {"status": "cancelled", "outcome": "cancelled"}
        again = httpx.post(f"{url}/api/sessions/cli/stop", timeout=30)
        assert again.status_code == 409 and "not running" in again.json()["error"]
