"""``GET /api/benchmarks/options`` over a live server (issue 42, item 7): the envs, the
shipped case sets and session configs of the working directory, the LLM presets and the
defaults; a shipped case set and session config sent back as they are start a benchmark;
a working directory without configs lists none. The route is in ``/openapi.json`` and not
taken for a benchmark's id."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from langmarl.jobs import JobSpec
from langmarl.jobs.local import StoredJobs
from langmarl.testing.asgi import live_server
from langmarl.web import create_app

ROOT = Path(__file__).parents[2]


class RecordingBackend(StoredJobs):
    """Jobs recorded (config resolved and validated) but never started."""

    def submit(self, spec: JobSpec) -> str:
        return self.new_record(spec).job_id


def test_the_options_start_a_benchmark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)  # the checkout's configs/p2p, as `langmarl dashboard` sees them
    runs = tmp_path / "runs"
    backend = RecordingBackend(runs)
    with live_server(create_app(runs, backend=backend)) as url:
        response = httpx.get(f"{url}/api/benchmarks/options", timeout=60)
        assert response.status_code == 200, response.text
        options = response.json()
        assert {"InvertedPendulum-v5", "HalfCheetah-v5"} <= {e["env_id"] for e in options["envs"]}
        [cases] = options["case_sets"]
        assert (cases["name"], cases["path"]) == ("cases", "configs/p2p/cases.csv")
        assert cases["cases"] == len(cases["cases_csv"].splitlines()) - 1 >= 8
        assert "locomotion" in cases["categories"] and "Hopper-v5" in cases["envs"]
        assert ",configs/p2p/checks/halfcheetah_backwards.py," in cases["cases_csv"]
        configs = {c["name"]: c for c in options["session_configs"]}
        assert {"quickstart", "smoke"} <= set(configs)
        assert "train_halfcheetah_tiny" not in configs  # a training run's config, not a session's
        assert "env_id" not in configs["quickstart"]["session"]  # each case names its env
        llms = {llm["name"]: llm for llm in options["llms"]}
        assert llms["local"]["multimodal"] is False and llms["gpt-4o"]["multimodal"] is True
        assert options["max_cpus"] >= 1
        assert options["defaults"]["resources"] == {"cpus": 1, "memory_gb": None}
        body = {"cases_csv": cases["cases_csv"], "session": configs["smoke"]["session"],
                "limit": 1}  # fmt: skip
        started = httpx.post(f"{url}/api/benchmarks", json=body, timeout=60)
        assert started.status_code == 201, started.text
        assert [job.spec.kind for job in backend.list()] == ["p2p_bench"]
        paths = httpx.get(f"{url}/openapi.json", timeout=60).json()["paths"]
        assert "get" in paths["/api/benchmarks/options"]


def test_without_shipped_configs_the_lists_are_empty(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with live_server(create_app(tmp_path / "runs")) as url:
        options = httpx.get(f"{url}/api/benchmarks/options", timeout=60).json()
    assert (options["case_sets"], options["session_configs"]) == ([], [])
    assert options["envs"] and options["llms"]
