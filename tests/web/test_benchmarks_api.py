"""`/api/benchmarks`: start a benchmark (a p2p_bench job, validated before anything runs),
list it with status and progress, read it case by case, stop it, delete it into the trash.

The backend records jobs as the real ones do (their config resolved and validated) but starts
no process; a benchmark "runs" by reading its job's config and calling ``run_bench`` here,
with a fake ``run_loop`` that writes a real session. The real job process is in
tests/p2p/test_bench_job.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_fixtures import session_run

from langmarl.core.validation import validate_model
from langmarl.jobs import JobRecord, JobSpec
from langmarl.jobs.local import StoredJobs
from langmarl.store.run import RunDir
from langmarl.web import create_app

CASES = "env_id,instruction,category,difficulty\n" + "".join(
    f"InvertedPendulum-v5,balance {i},balance,easy\n" for i in range(3)
)


class RecordingBackend(StoredJobs):
    """Jobs recorded (config resolved and validated) but never started; cancel ends them."""

    def submit(self, spec: JobSpec) -> str:
        return self.new_record(spec).job_id

    def cancel(self, job_id: str) -> JobRecord:
        record = self.status(job_id)
        if record.done:
            return record
        return self.store.update(job_id, cancel_requested=True, state="cancelled")


@pytest.fixture
def served(tmp_path: Path) -> tuple[TestClient, RecordingBackend, Path]:
    runs = tmp_path / "runs"
    backend = RecordingBackend(runs)
    return TestClient(create_app(runs, backend=backend)), backend, runs


def _fake_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_loop`` writing a real (passed) session where the bench asks for one."""
    from langmarl.p2p.session.contracts import LoopResult

    def run_loop(intent: str, config: Any, *, runs_dir: Path, session_id: str, **_: Any):
        session_run(Path(runs_dir) / session_id)
        return LoopResult(session_id=session_id, prompt=intent, env_id=config.env_id,
                          status="passed", best_score=0.9)  # fmt: skip

    monkeypatch.setattr("langmarl.p2p.session.loop.run_loop", run_loop)


def _run_job(backend: RecordingBackend, job_id: str) -> None:
    """What the job's command does with its config, in this process."""
    from langmarl.p2p.bench.cases import BenchConfig
    from langmarl.p2p.bench.run import run_bench

    config = json.loads(backend.store.config_path(job_id).read_text())
    run_bench(validate_model(BenchConfig, config))


def test_start_follow_and_delete_a_benchmark(served, monkeypatch) -> None:
    client, backend, runs = served
    body = {"cases_csv": CASES, "session": {"max_iterations": 1}, "limit": 2,
            "resources": {"cpus": 1}, "seed": 4}  # fmt: skip
    response = client.post("/api/benchmarks", json=body)
    assert response.status_code == 201, response.text
    started = response.json()
    bench_id = started["bench_id"]
    assert bench_id.startswith("bench-") and bench_id == started["job_id"]
    assert (started["status"], started["cases_done"]) == ("queued", 0)
    assert [b["bench_id"] for b in client.get("/api/benchmarks").json()] == [bench_id]
    config = json.loads(backend.store.config_path(bench_id).read_text())
    assert (config["run_id"], config["seed"], config["limit"]) == (bench_id, 4, 2)
    assert config["runs_dir"] == str(runs.resolve())

    _fake_loop(monkeypatch)
    _run_job(backend, bench_id)
    backend.store.update(bench_id, state="completed")
    [listed] = client.get("/api/benchmarks").json()
    assert (listed["status"], listed["cases_done"], listed["cases_total"]) == ("completed", 2, 2)
    assert listed["summary"]["success_rate"] == 1.0 and listed["run_id"] == bench_id
    detail = client.get(f"/api/benchmarks/{bench_id}").json()
    assert [c["case"]["instruction"] for c in detail["cases"]] == ["balance 0", "balance 1"]
    session = detail["cases"][0]["run_id"]
    assert session.startswith(f"{bench_id}~session_")
    assert client.get(f"/api/runs/{session}").json()["run"]["kind"] == "p2p"
    assert detail["summary"]["category=balance"]["cases"] == 2
    run = client.get(f"/api/runs/{bench_id}").json()["run"]
    assert (run["kind"], run["progress"]) == ("p2p_bench", "2/2 cases")

    stopped = client.post(f"/api/benchmarks/{bench_id}/stop")  # finished: no change
    assert stopped.status_code == 200 and stopped.json()["status"] == "completed"
    assert backend.status(bench_id).cancel_requested is False
    deleted = client.delete(f"/api/benchmarks/{bench_id}")
    assert deleted.status_code == 200 and not (runs / bench_id).exists()
    [trashed] = client.get("/api/trash").json()
    assert (trashed["run_id"], trashed["kind"]) == (bench_id, "p2p_bench")
    assert client.get(f"/api/benchmarks/{bench_id}").status_code == 404
    assert client.get("/api/benchmarks").json() == []


def test_a_queued_benchmark_stops_and_a_running_one_is_not_deleted(served) -> None:
    client, backend, runs = served
    queued = client.post("/api/benchmarks", json={"cases_csv": CASES}).json()["bench_id"]
    assert client.delete(f"/api/benchmarks/{queued}").status_code == 409
    stopped = client.post(f"/api/benchmarks/{queued}/stop").json()
    assert (stopped["job_state"], stopped["stop_requested"]) == ("cancelled", True)
    assert backend.status(queued).state == "cancelled"

    # a benchmark started in a terminal (this process plays it): running, no job
    run = RunDir(runs / "bench_term")
    run.start("p2p_bench", {}, cases_total=3, cases_done=0)
    plan = [{"env_id": "InvertedPendulum-v5", "instruction": f"b{i}"} for i in range(3)]
    current = {"index": 1, "case": plan[0], "session_id": "session_x"}
    session_run(runs / "bench_term" / "session_x")
    run.write_json("bench.json", {"plan": plan, "cases": [], "current": current,
                                  "complete": False, "cases_total": 3})  # fmt: skip
    detail = client.get("/api/benchmarks/bench_term").json()
    assert (detail["status"], detail["cases_done"], detail["cases_total"]) == ("running", 0, 3)
    assert [c["status"] for c in detail["cases"]] == ["completed", "pending", "pending"]
    assert detail["cases"][0]["run_id"] == "bench_term~session_x"
    refused = client.delete("/api/benchmarks/bench_term")
    assert refused.status_code == 409 and "/stop" in refused.json()["fix"]
    elsewhere = client.post("/api/benchmarks/bench_term/stop")
    assert elsewhere.status_code == 409 and f"kill -TERM {os.getpid()}" in elsewhere.json()["fix"]
    assert (runs / "bench_term" / "bench.json").is_file()


def test_a_benchmark_stopped_before_its_first_case_stays_listed_and_deletable(
    served,
) -> None:
    """Issue 42, item 3: the job was cancelled while the command started (its directory
    holds only the job's log): the benchmark is listed as cancelled, and DELETE moves it to
    the trash; a job whose files are gone is not listed."""
    client, _, runs = served
    bench_id = client.post("/api/benchmarks", json={"cases_csv": CASES}).json()["bench_id"]
    log = runs / bench_id / "logs" / "job.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("loading the embedded model…\n")
    client.post(f"/api/benchmarks/{bench_id}/stop")
    listed = {b["bench_id"]: b for b in client.get("/api/benchmarks").json()}
    assert listed[bench_id]["status"] == "cancelled" and listed[bench_id]["cases_done"] == 0
    assert client.get(f"/api/benchmarks/{bench_id}").status_code == 200
    deleted = client.delete(f"/api/benchmarks/{bench_id}")
    assert deleted.status_code == 200, deleted.text
    assert not (runs / bench_id).exists()
    assert bench_id not in {b["bench_id"] for b in client.get("/api/benchmarks").json()}


def test_an_older_table_is_listed_and_deleted(served) -> None:
    client, _, runs = served
    session_run(runs / "bench_old" / "case_session")
    table = {"cases": [{"case": {"env_id": "InvertedPendulum-v5", "instruction": "balance"},
                        "session_id": "case_session", "status": "passed", "best_score": 0.9}],
             "summary": {"all": {"cases": 1, "success_rate": 1.0, "mean_score": 0.9}},
             "complete": True}  # fmt: skip
    (runs / "bench_old" / "bench.json").write_text(json.dumps(table))
    [listed] = client.get("/api/benchmarks").json()
    assert (listed["bench_id"], listed["status"]) == ("bench_old", "completed")
    assert (listed["cases_done"], listed["cases_total"]) == (1, 1)
    detail = client.get("/api/benchmarks/bench_old").json()
    assert detail["cases"][0]["run_id"] == "bench_old~case_session"
    assert client.delete("/api/benchmarks/bench_old").status_code == 200
    assert client.get("/api/trash").json()[0]["original"] == "bench_old"


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"cases_csv": CASES, "session": {"max_iteration": 2}}, "session.max_iteration"),
        ({"cases": [{"env_id": "Cheetah-v5", "instruction": "run"}]}, "cases[0].env_id"),
        ({"cases_csv": "env,instruction\nx,y\n"}, "cases_csv lacks column"),
        ({}, "no cases"),
        ({"cases_csv": CASES, "runs_dir": "/tmp"}, "'runs_dir'"),
        ({"cases_csv": CASES, "limit": 0}, "'limit'"),
        ({"cases_csv": CASES, "llm": "/etc/passwd"}, "outside"),
        ({"cases_csv": CASES, "resources": {"cpus": 0}}, "resources.cpus"),
    ],
)
def test_an_invalid_benchmark_is_422_naming_the_field(served, body, named) -> None:
    client, backend, _ = served
    response = client.post("/api/benchmarks", json=body)
    assert response.status_code == 422 and named in response.json()["error"], response.text
    assert backend.list() == [] and client.get("/api/benchmarks").json() == []


def test_without_a_backend_starting_is_503_and_routes_are_documented(tmp_path: Path) -> None:
    client = TestClient(create_app(tmp_path))
    response = client.post("/api/benchmarks", json={"cases_csv": CASES})
    assert response.status_code == 503 and "backend" in response.json()["fix"]
    assert client.get("/api/benchmarks/nope").status_code == 404
    paths = client.get("/openapi.json").json()["paths"]
    assert set(paths["/api/benchmarks"]) == {"get", "post"}
    assert set(paths["/api/benchmarks/{bench_id}"]) == {"get", "delete"}
    assert "post" in paths["/api/benchmarks/{bench_id}/stop"]


def test_a_benchmark_behind_a_symlink_is_not_listed(tmp_path: Path) -> None:
    """A directory linked out of the runs root is not followed (issue 39), as the runs
    listing does not follow one; the detail and DELETE refuse it already. Real HTTP."""
    import httpx

    from langmarl.testing.asgi import live_server

    runs = tmp_path / "runs"
    outside = tmp_path / "outside"
    (outside / "group" / "bench_x").mkdir(parents=True)
    table = {"cases": [], "summary": {}, "complete": True}
    (outside / "group" / "bench_x" / "bench.json").write_text(json.dumps(table))
    (outside / "bench_y").mkdir()
    (outside / "bench_y" / "bench.json").write_text(json.dumps(table))
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "linked_group").symlink_to(outside / "group")
    (runs / "linked_bench").symlink_to(outside / "bench_y")
    (runs / "real").mkdir()
    (runs / "real" / "bench.json").write_text(json.dumps(table))
    with live_server(create_app(runs)) as url:
        listed = httpx.get(f"{url}/api/benchmarks", timeout=60).json()
    assert [b["bench_id"] for b in listed] == ["real"]  # the one inside, not the linked two
