"""`/api/runs`: list with filters, sort and pages; detail; metrics; events."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fastapi.testclient import TestClient

from langmarl.core.processes import process_start
from langmarl.store.run import RunDir
from langmarl.web import create_app


def _ids(response) -> list[str]:
    assert response.status_code == 200, response.text
    return [run["run_id"] for run in response.json()["runs"]]


def test_the_list_has_every_kind_with_status_steps_score_and_sparkline(client: TestClient) -> None:
    body = client.get("/api/runs").json()
    runs = {run["run_id"]: run for run in body["runs"]}
    assert body["total"] == 5
    assert {k: r["kind"] for k, r in runs.items()} == {
        "lang": "language", "weights~mag": "magrpo", "grpo": "parl_grpo",
        "session": "p2p", "bench_1~case_session": "p2p",
    }  # fmt: skip
    assert all(r["status"] == "completed" for r in runs.values())
    mag = runs["weights~mag"]
    assert (mag["steps"], mag["last_step"], mag["score"]) == (4, 4, 0.9)  # held-out, not 1.0
    assert mag["score_label"] == "held-out" and runs["grpo"]["score_label"] == "last reward"
    assert mag["sparkline"] == [0.25, 0.5, 0.75, 1.0]
    assert runs["lang"]["steps"] == 2 and len(runs["lang"]["sparkline"]) == 2
    assert runs["session"]["sparkline"] == [0.9]


def test_filters_sort_and_pages(client: TestClient) -> None:
    assert _ids(client.get("/api/runs?kind=parl_grpo")) == ["grpo"]
    assert _ids(client.get("/api/runs?text=MAG")) == ["weights~mag"]
    assert _ids(client.get("/api/runs?status=failed")) == []
    by_id = _ids(client.get("/api/runs?sort=run_id"))
    assert by_id == sorted(by_id)
    assert _ids(client.get("/api/runs?sort=-run_id")) == by_id[::-1]
    page = client.get("/api/runs?sort=run_id&limit=2&offset=1").json()
    assert page["total"] == 5 and [r["run_id"] for r in page["runs"]] == by_id[1:3]
    scores = [r["score"] for r in client.get("/api/runs?sort=-score").json()["runs"]]
    assert scores == sorted(scores, key=lambda v: (v is not None, v or 0.0), reverse=True)


def test_bad_queries_are_400_naming_the_field(client: TestClient) -> None:
    response = client.get("/api/runs?kind=magrp")
    assert response.status_code == 400
    assert "Did you mean 'magrpo'" in response.json()["error"]
    assert "language" in response.json()["fix"]
    response = client.get("/api/runs?sort=size")
    assert response.status_code == 400 and "'sort'" in response.json()["error"]
    assert client.get("/api/runs?limit=0").status_code == 400
    assert client.get("/api/runs?status=bogus").status_code == 400


def test_detail_has_record_config_without_secrets_and_summary(client: TestClient) -> None:
    body = client.get("/api/runs/weights~mag").json()
    assert body["run"]["kind"] == "magrpo" and body["record"]["status"] == "completed"
    assert body["config"]["api_key"] == "[REDACTED]" and "sk-not-shown" not in str(body)
    assert body["summary"]["checkpoints"] == ["step-000004"]
    lang = client.get("/api/runs/lang").json()
    assert lang["config"]["task_type"] == "qa" and lang["summary"]["iterations"] == [0, 1, 2]


def test_unknown_and_invalid_run_ids(client: TestClient) -> None:
    response = client.get("/api/runs/nope")
    assert response.status_code == 404
    assert response.json() == {
        "error": "no run 'nope' in the runs directory",
        "fix": "GET /api/runs lists the run ids (deleted runs: GET /api/trash)",
    }
    for bad in ("..", "weights~..", ".trash", "~x"):
        assert client.get(f"/api/runs/{bad}/metrics").status_code in (400, 404), bad
    assert client.get("/api/runs/weights~..").status_code == 400
    assert client.get("/api/nothing").json()["fix"].startswith("check the URL")


def test_metrics_as_columns_with_keys_and_since(client: TestClient) -> None:
    body = client.get("/api/runs/weights~mag/metrics").json()
    assert body["steps"] == [1, 2, 3, 4] and set(body["keys"]) == {"reward_mean", "loss"}
    assert body["series"]["reward_mean"] == [0.25, 0.5, 0.75, 1.0]
    body = client.get("/api/runs/weights~mag/metrics?keys=loss&since=2").json()
    assert body["steps"] == [3, 4] and list(body["series"]) == ["loss"]
    assert body["last_step"] == 4
    assert client.get("/api/runs/weights~mag/metrics?since=4").json()["steps"] == []
    response = client.get("/api/runs/weights~mag/metrics?keys=reward_men")
    assert response.status_code == 400 and "reward_mean" in response.json()["error"]
    assert client.get("/api/runs/weights~mag/metrics?since=x").status_code == 400
    assert client.get("/api/runs/nope/metrics").status_code == 404


def test_events_numbered_and_filtered(client: TestClient) -> None:
    body = client.get("/api/runs/lang/events").json()
    names = [e["event"] for e in body["events"]]
    assert names[0] == "run_start" and names[-1] == "run_end"
    assert [e["seq"] for e in body["events"]] == list(range(len(names)))
    tail = client.get(f"/api/runs/lang/events?since={len(names) - 1}").json()
    assert [e["event"] for e in tail["events"]] == ["run_end"] and tail["next"] == len(names)
    ends = client.get("/api/runs/lang/events?event=iteration_end").json()["events"]
    assert len(ends) == 2
    newest = client.get("/api/runs/lang/events?limit=2&last=true").json()
    assert [e["seq"] for e in newest["events"]] == [len(names) - 2, len(names) - 1]
    assert newest["next"] == len(names)
    assert client.get("/api/runs/lang/events?limit=0").status_code == 400
    assert client.get("/api/runs/nope/events").status_code == 404


def test_the_cached_list_follows_changes_to_a_run(own_runs: Path) -> None:
    client = TestClient(create_app(own_runs))
    assert _steps(client, "mag") == 4
    RunDir(own_runs / "mag").log_metrics(5, reward_mean=2.0)
    assert _steps(client, "mag") == 5
    (own_runs / "mag" / "heldout.json").unlink()  # no held-out score: the last reward
    assert client.get("/api/runs?sort=-score").json()["runs"][0]["score"] == 2.0
    trainer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    run = RunDir(own_runs / "crashed")
    run.start("iac")
    run.update(pid=trainer.pid, pid_started=process_start(trainer.pid))
    assert _status(client, "crashed") == "running"
    trainer.kill()
    trainer.wait()
    assert _status(client, "crashed") == "failed"  # no file changed: liveness is not cached


def _status(client: TestClient, run_id: str) -> str:
    return str({r["run_id"]: r for r in client.get("/api/runs").json()["runs"]}[run_id]["status"])


def _steps(client: TestClient, run_id: str) -> int:
    runs = {r["run_id"]: r for r in client.get("/api/runs").json()["runs"]}
    return int(runs[run_id]["steps"])
