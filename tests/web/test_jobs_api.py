"""`/api/jobs` over a real LocalBackend: a tiny language job against a real HTTP stub LLM
is submitted, followed to its end and shows up as a run; invalid configs are refused before
anything runs; a running job is cancelled gracefully."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from web_fixtures import REPLIES

from langmarl.jobs import LocalBackend
from langmarl.testing.asgi import live_server
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.processes import wait_until
from langmarl.testing.roles import role_responder
from langmarl.web import create_app

STUB = role_responder(REPLIES)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def job_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The jobs' API key, in the server's environment, which the operator lets jobs have."""
    monkeypatch.setenv("JOB_TEST_KEY", "sk-job-secret-5678")
    monkeypatch.setenv("LANGMARL_JOB_ENV", "JOB_TEST_KEY")


def _language_job(stub: OpenAIStub, iterations: int = 1) -> dict[str, Any]:
    llm = stub.llm_config(api_key_env_var="JOB_TEST_KEY")
    config = {"env": "language", "num_iterations": iterations, "trajectories_per_iteration": 2,
              "validation_size": 1, "llm": llm}  # fmt: skip
    return {"kind": "language", "config": config, "seed": 1, "name": "tiny"}


def test_submit_follow_and_find_the_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    backend = LocalBackend(runs, max_cpus=1)
    with OpenAIStub(responder=STUB) as stub, live_server(create_app(runs, backend=backend)) as url:
        response = httpx.post(f"{url}/api/jobs", json=_language_job(stub), timeout=60)
        assert response.status_code == 201, response.text
        job = response.json()
        assert job["state"] in ("queued", "running") and job["job_id"].startswith("tiny-")
        assert job["run_id"] == job["job_id"]
        assert "sk-job-secret" not in response.text
        backend.wait(job["job_id"], timeout_s=180)
        done = httpx.get(f"{url}/api/jobs/{job['job_id']}", timeout=30).json()
        assert (done["state"], done["exit_code"]) == ("completed", 0)
        listed = httpx.get(f"{url}/api/jobs", timeout=30).json()
        assert [j["job_id"] for j in listed] == [job["job_id"]]
        logs = httpx.get(f"{url}/api/jobs/{job['job_id']}/logs", timeout=30).json()["logs"]
        assert "Status: completed" in logs
        tail = httpx.get(f"{url}/api/jobs/{job['job_id']}/logs?tail=1", timeout=30).json()
        assert tail["logs"].count("\n") <= 1
        run = httpx.get(f"{url}/api/runs/{job['run_id']}", timeout=30).json()
        assert (run["run"]["kind"], run["run"]["status"]) == ("language", "completed")
        assert "sk-job-secret" not in str(run)
        assert done["spec"]["env"] == ["JOB_TEST_KEY"]  # the job was given the variable
    on_disk = [p.read_text(errors="replace") for p in runs.rglob("*") if p.is_file()]
    assert not any("sk-job-secret" in text for text in on_disk)  # issue 39, finding 6


def test_invalid_jobs_are_refused_before_anything_runs(tmp_path: Path) -> None:
    """Over real HTTP (a live server), each refusal a 422 that names the field."""
    runs = tmp_path / "runs"
    with (
        live_server(create_app(runs, backend=LocalBackend(runs))) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        bad = {"kind": "language", "config": {"env": "language", "trajectories_per_iteration": 0}}
        response = client.post("/api/jobs", json=bad)
        assert (
            response.status_code == 422 and "trajectories_per_iteration" in response.json()["error"]
        )
        response = client.post("/api/jobs", json={"config": {}})
        assert response.status_code == 422 and "'kind'" in response.json()["error"]
        response = client.post("/api/jobs", json={"kind": "p2p", "config": {}})
        assert response.status_code == 422 and "intent" in response.json()["error"]
        # overrides are applied to the config: the same outside-file check (issue 39, finding 4)
        for overrides in ({"benchmark_path": "/etc/passwd"}, {"llm": "/etc/passwd"}):
            sneaky = {"kind": "language", "config": {"env": "language"}, "overrides": overrides}
            response = client.post("/api/jobs", json=sneaky)
            assert response.status_code == 422, response.text
            error = response.json()["error"]
            assert "overrides." in error and "outside" in error and "root:" not in error
        # a key inline in a job's config would be written to its records (issue 39, finding 6)
        inline = {"kind": "language", "config": {"env": "language", "llm": {
            "name": "x", "model_string": "x", "base_url": "http://127.0.0.1:9/v1",
            "api_key": "sk-inline-1234"}}}  # fmt: skip
        response = client.post("/api/jobs", json=inline)
        assert response.status_code == 422 and "config.llm.api_key" in response.json()["error"]
        assert "sk-inline" not in response.text
        # a training job's reward gets the session's static check (issue 39, finding 5)
        reward = "import os\ndef reward_fn(obs, action, next_obs, info):\n    return 0.0, {}\n"
        train = {"kind": "p2p_train", "config": {"reward_source": reward}}
        response = client.post("/api/jobs", json=train)
        assert response.status_code == 422, response.text
        assert "reward_source" in response.json()["error"] and "os" in response.json()["error"]
        response = client.post("/api/jobs", json={"kind": "language", "config": "/etc/passwd"})
        assert response.status_code == 422 and "file name" in response.json()["error"]
        # a file named inside the config (issue 26, finding 13): refused, never read
        escapes = [
            {"env": "language", "llm": "/etc/passwd"},
            {"env": "language", "dataset": {"path": "../../../../etc/hostname"}},
        ]
        for inside in escapes:
            response = client.post("/api/jobs", json={"kind": "language", "config": inside})
            assert response.status_code == 422 and "outside" in response.json()["error"], inside
            assert "root:" not in response.text
        response = client.post("/api/jobs", json={"kind": "language", "resources": {"cpus": 512}})
        assert response.status_code == 422 and "cpus" in response.json()["error"]
        assert client.get("/api/jobs").json() == [] and not list(runs.glob("*/run.json"))
        for route in ("/api/jobs/nope", "/api/jobs/nope/logs"):
            assert client.get(route).status_code == 404, route
        missing = client.post("/api/jobs/nope/cancel")
        assert (
            missing.status_code == 404 and missing.json()["fix"] == "GET /api/jobs lists the jobs"
        )


def test_without_a_backend_jobs_are_503(tmp_path: Path) -> None:
    response = TestClient(create_app(tmp_path)).get("/api/jobs")
    assert response.status_code == 503 and "backend" in response.json()["fix"]


def test_cancel_a_running_job(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    backend = LocalBackend(runs, max_cpus=1, grace_s=60)
    client = TestClient(create_app(runs, backend=backend))
    with OpenAIStub(latency=0.2, responder=STUB) as stub:
        job_id = client.post("/api/jobs", json=_language_job(stub, iterations=50)).json()["job_id"]
        metrics = runs / job_id / "metrics.jsonl"
        wait_until(lambda: metrics.is_file() and metrics.stat().st_size > 0, timeout_s=180,
                   what="the job's first iteration")  # fmt: skip
        assert client.get(f"/api/runs/{job_id}").json()["run"]["status"] == "running"
        assert client.delete(f"/api/runs/{job_id}").status_code == 409  # still running
        response = client.post(f"/api/jobs/{job_id}/cancel")
        assert response.status_code == 200
        backend.wait(job_id, timeout_s=120)
    assert client.get(f"/api/jobs/{job_id}").json()["state"] == "cancelled"
    run = client.get(f"/api/runs/{job_id}").json()["run"]
    assert run["status"] == "cancelled" and run["steps"] >= 1
