"""What a job's command sees of the environment, and where a job sent over the API may
point its LLM and its Ray cluster (issue 39, finding 1): the dashboard's token and the
server's keys stay out of every job; a job over the API names only variables and hosts the
operator allowed, and a refusal names the field and the setting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from langmarl.jobs import LocalBackend
from langmarl.jobs.environment import job_environment, key_variables, known_key_variables
from langmarl.jobs.process import run_command
from langmarl.testing.asgi import live_server
from langmarl.web import create_app

SERVER = {
    "PATH": "/usr/bin", "HOME": "/home/op", "LANG": "C.UTF-8", "HF_HOME": "/cache/hf",
    "LANGMARL_RUNS_DIR": "runs", "LANGMARL_DASHBOARD_TOKEN": "dash-secret",
    "OPENAI_API_KEY": "sk-op", "AWS_SECRET_ACCESS_KEY": "aws-secret", "HF_TOKEN": "hf-secret",
    "DATABASE_URL": "postgres://u:pw@h/db",
}  # fmt: skip


def test_a_job_gets_the_base_set_and_only_the_keys_its_spec_names() -> None:
    env = job_environment(2, base=SERVER)
    assert {"PATH", "HOME", "LANG", "HF_HOME", "LANGMARL_RUNS_DIR"} <= set(env)
    assert not {"LANGMARL_DASHBOARD_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY",
                "HF_TOKEN", "DATABASE_URL"} & set(env)  # fmt: skip
    assert env["OMP_NUM_THREADS"] == "2"
    passed = job_environment(1, ["OPENAI_API_KEY"], base=SERVER)
    assert passed["OPENAI_API_KEY"] == "sk-op" and "LANGMARL_DASHBOARD_TOKEN" not in passed


def test_a_real_job_command_does_not_see_the_token(tmp_path: Path) -> None:
    code = "import os; print(sorted(k for k in os.environ if 'TOKEN' in k or 'KEY' in k))"
    log = tmp_path / "job.log"
    environ = {**SERVER, "PATH": "/usr/bin:/bin"}
    with open(log, "wb") as out:
        exit_code = run_command([sys.executable, "-c", code],
                                env=job_environment(1, ["OPENAI_API_KEY"], base=environ),
                                log=out, stop_requested=lambda: False)  # fmt: skip
    assert exit_code == 0, log.read_text()
    assert log.read_text().strip().splitlines()[-1] == "['OPENAI_API_KEY']"


def test_the_variables_a_config_reads_are_found_with_their_field() -> None:
    config = {"llm": {"preset": "deepseek-chat"}, "actor_llm": "gemini-2.5-flash",
              "critic": {"llm": {"api_key_env_var": "MY_KEY"}}}  # fmt: skip
    assert key_variables(config) == {
        "DEEPSEEK_API_KEY": "config.llm.preset", "GEMINI_API_KEY": "config.actor_llm",
        "MY_KEY": "config.critic.llm.api_key_env_var",
    }  # fmt: skip
    assert key_variables({"llm": "local"}) == {}  # the embedded model needs no key
    assert {"OPENAI_API_KEY", "GEMINI_API_KEY", "HF_TOKEN"} <= known_key_variables()


def _submit(client: httpx.Client, llm: dict, **extra: object) -> tuple[int, dict]:
    job = {"kind": "language", "config": {"env": "language", "llm": llm}, **extra}
    response = client.post("/api/jobs", json=job)
    return response.status_code, response.json()


def test_over_the_api_a_job_names_only_allowed_variables_and_hosts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    monkeypatch.delenv("LANGMARL_JOB_ENV", raising=False)
    monkeypatch.delenv("LANGMARL_JOB_HOSTS", raising=False)
    with (
        live_server(create_app(runs, backend=LocalBackend(runs))) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        # the attack of the finding: the dashboard's token as the key, sent to a listener
        stolen = {"model_string": "m", "base_url": "http://127.0.0.1:9/v1",
                  "api_key_env_var": "LANGMARL_DASHBOARD_TOKEN"}  # fmt: skip
        status, body = _submit(client, stolen)
        assert status == 422 and "config.llm.api_key_env_var" in body["error"]
        assert "LANGMARL_JOB_ENV" in body["fix"]
        status, body = _submit(client, {"model_string": "m", "base_url": "http://203.0.113.7/v1",
                                        "requires_api_key": False})  # fmt: skip
        assert status == 422 and "config.llm.base_url" in body["error"]
        assert "LANGMARL_JOB_HOSTS" in body["fix"]
        status, body = _submit(client, {"preset": "local"}, env=["AWS_SECRET_ACCESS_KEY"])
        assert status == 422 and "'env'" in body["error"]
        p2p = {"kind": "p2p", "intent": "balance",
               "config": {"backend": "ray", "ray_address": "ray://198.51.100.2:10001"}}  # fmt: skip
        response = client.post("/api/jobs", json=p2p)
        assert response.status_code == 422 and "ray_address" in response.json()["error"]
        # what the operator allows goes through, and the job is told to pass it
        monkeypatch.setenv("LANGMARL_JOB_ENV", "MY_KEY")
        monkeypatch.setenv("LANGMARL_JOB_HOSTS", "llm.internal")
        allowed = {"name": "m", "model_string": "m", "base_url": "http://llm.internal:8000/v1",
                   "api_key_env_var": "MY_KEY"}  # fmt: skip
        status, body = _submit(client, allowed)
        assert status == 201, body
        assert client.get(f"/api/jobs/{body['job_id']}").json()["spec"]["env"] == ["MY_KEY"]
        client.post(f"/api/jobs/{body['job_id']}/cancel")


def test_the_cli_passes_the_operators_provider_keys(tmp_path: Path) -> None:
    """``langmarl jobs submit`` is the operator: its job is told to pass every provider key
    (each reaches the command only if set) and the ones its config names."""
    config = tmp_path / "c.json"
    config.write_text('{"env": "language", "llm": {"preset": "local"}, "optimizer_llm": '
                      '{"name": "t", "model_string": "t", "base_url": "http://127.0.0.1:9/v1", '
                      '"api_key_env_var": "TEAM_KEY"}}')  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "langmarl.cli", "jobs", "submit", "language", str(config),
         "--runs-dir", str(tmp_path / "runs"), "--name", "cli"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = LocalBackend(tmp_path / "runs").list()
    assert {"OPENAI_API_KEY", "TEAM_KEY"} <= set(record.spec.env)
    LocalBackend(tmp_path / "runs").cancel(record.job_id)
