"""A benchmark as a real job: ``langmarl p2p bench --config`` run by the LocalBackend's
supervisor, its sessions asking a real HTTP stub LLM, validating rewards in the sandbox and
training real PPO at a tiny budget. One bench (of one case) runs to ``completed``; another,
started through ``POST /api/benchmarks``, is stopped after its first case and ends
``cancelled`` with that case kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from langmarl.jobs import JobSpec, LocalBackend, Resources
from langmarl.jobs.spec import command
from langmarl.store.run import RunDir
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.processes import wait_until
from langmarl.web import create_app

from .conftest import PENDULUM_REWARD

REWARD = f"```python\n{PENDULUM_REWARD.strip()}\n```"
SESSION = {
    "max_iterations": 1, "elaborate": False, "review": False, "code_judge": False,
    "max_fix_attempts": 0, "total_timesteps": 128, "max_parallel": 1,
    "train": {"num_steps": 128, "batch_size": 64, "n_epochs": 1, "num_evals": 1,
              "eval_episodes": 2, "max_episode_steps": 50, "record_video": False},
}  # fmt: skip


def _reply(body: dict[str, Any]) -> str:
    system = str(body["messages"][0]["content"])
    return "SCORE: 0.9" if "SCORE" in system else REWARD


def _cases(count: int) -> list[dict[str, str]]:
    return [{"env_id": "InvertedPendulum-v5", "instruction": f"balance {i}", "category": "b"}
            for i in range(count)]  # fmt: skip


def test_the_job_runs_the_bench_command_on_its_config() -> None:
    spec = JobSpec(kind="p2p_bench", config={"cases": _cases(1)})
    argv = command(spec, Path("/c/job.json"), "python")
    assert argv == ["python", "-m", "langmarl.cli", "p2p", "bench", "--config", "/c/job.json"]


@pytest.mark.slow
def test_a_bench_job_completes_and_a_stopped_one_keeps_its_finished_cases(tmp_path: Path):
    runs = tmp_path / "runs"
    backend = LocalBackend(runs, max_cpus=2, grace_s=60)
    client = TestClient(create_app(runs, backend=backend))
    with OpenAIStub(responder=_reply) as stub:
        # one case: a bench of several is tests/p2p/test_bench_run.py's (fake trainer)
        config = {"cases": _cases(1), "session": SESSION, "llm": stub.llm_config()}
        done_id = backend.submit(JobSpec(kind="p2p_bench", config=config, resources=Resources()))
        body = {"cases": _cases(3), "session": SESSION, "llm": stub.llm_config()}
        stopped_id = client.post("/api/benchmarks", json=body).json()["bench_id"]
        table = runs / stopped_id / "bench.json"
        finished = lambda: table.is_file() and len(json.loads(table.read_text())["cases"]) >= 1  # noqa: E731
        wait_until(finished, timeout_s=240, what="the first case of the bench to stop")
        assert client.post(f"/api/benchmarks/{stopped_id}/stop").json()["stop_requested"]
        stopped = backend.wait(stopped_id, timeout_s=120)
        completed = backend.wait(done_id, timeout_s=240)
    assert (completed.state, completed.exit_code) == ("completed", 0), backend.logs(done_id)
    run = RunDir(runs / done_id)
    assert (run.record().status, run.record().cases_done) == ("completed", 1)  # type: ignore[attr-defined]
    result = json.loads((runs / done_id / "bench.json").read_text())
    assert result["complete"] and [c["status"] for c in result["cases"]] == ["passed"]

    assert (stopped.state, stopped.exit_code) == ("cancelled", 143), backend.logs(stopped_id)
    record = RunDir(runs / stopped_id).record()
    assert (record.status, record.error) == ("cancelled", "cancelled (SIGTERM)")
    kept = json.loads(table.read_text())
    assert kept["complete"] is False and 1 <= len(kept["cases"]) < 3
    assert kept["cases"][0]["status"] == "passed"
    detail = client.get(f"/api/benchmarks/{stopped_id}").json()
    assert detail["status"] == "cancelled" and detail["cases_done"] == len(kept["cases"])
