"""`langmarl jobs`: a job submitted without --wait outlives the command; list, status, logs
and cancel from other processes see it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jobs_fakes import STUB_REPLY, language_config
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.jobs import JobStore
from langmarl.store.run import RunDir
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.processes import wait_until


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables as wide as their rows: the CLI's console reads COLUMNS once, when first made,
    so in a shared test process an earlier test's width would otherwise stick."""
    from langmarl.cli import common

    monkeypatch.setattr(common.console, "_width", 200)


def _jobs(*args: str) -> str:
    result = CliRunner().invoke(build_app(), ["jobs", *args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_submit_list_status_logs_cancel(tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    with OpenAIStub(latency=0.1, responder=STUB_REPLY) as stub:
        config = tmp_path / "c.json"
        config.write_text(json.dumps(language_config(stub, iterations=50)))
        submitted = subprocess.run(
            [sys.executable, "-m", "langmarl.cli", "jobs", "submit", "language", str(config),
             "--set", "trajectories_per_iteration=1", "--seed", "7", "--runs-dir", runs],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
        [record] = JobStore(runs).all()
        assert record.job_id in submitted.stdout
        run = RunDir(record.run_dir)
        log = ("logs", record.job_id, "--runs-dir", runs)
        wait_until(lambda: "iteration 1" in _jobs(*log), timeout_s=180, what="iteration 1 logged")
        assert record.job_id in _jobs("list", "--runs-dir", runs) and "running" in _jobs(
            "list", "--runs-dir", runs
        )
        status = json.loads(_jobs("status", record.job_id, "--runs-dir", runs, "--json"))
        assert status["state"] == "running" and status["spec"]["seed"] == 7
        assert len(run.metrics()) >= 1
        assert _jobs("logs", record.job_id, "--runs-dir", runs, "--tail", "0") == ""
        cancelled = _jobs("cancel", record.job_id, "--runs-dir", runs)
    assert "cancelled" in cancelled and "exit code: 143" in cancelled
    assert run.record().status == "cancelled"
    assert json.loads((run.path / "config.json").read_text())["trajectories_per_iteration"] == 1
    listed = CliRunner().invoke(
        build_app(), ["runs", "--runs-dir", runs, "--status", "cancelled"], env={"COLUMNS": "300"}
    )
    assert listed.exit_code == 0 and record.job_id in listed.output, listed.output


def test_unknown_job_and_backend_are_clear_errors(tmp_path: Path) -> None:
    app, runs = build_app(), str(tmp_path)
    result = CliRunner().invoke(app, ["jobs", "status", "nope", "--runs-dir", runs])
    assert result.exit_code != 0 and "no job 'nope'" in str(result.exception)
    result = CliRunner().invoke(app, ["jobs", "submit", "language", "--backend", "rey"])
    assert "Did you mean 'ray'?" in str(result.exception)
    result = CliRunner().invoke(app, ["jobs", "submit", "language", "--backend", "ray"])
    assert "add --wait, or give --address" in str(result.exception)


def test_a_forged_or_broken_job_record_signals_nothing_and_is_one_line(tmp_path: Path) -> None:
    """Issue 26, findings 10 and 12: ``pid: -1`` would make ``kill`` signal every process of
    the user; a record that is not a JobRecord was a 68-line traceback in ``jobs list``."""
    runs = tmp_path / "runs"
    good = {"job_id": "good", "spec": {"kind": "language", "config": "c.json"},
            "backend": "local", "state": "completed", "run_dir": str(runs / "good"),
            "log_path": str(runs / "good.log")}  # fmt: skip
    (runs / ".jobs").mkdir(parents=True)
    (runs / ".jobs" / "good.json").write_text(json.dumps(good))
    forged = {**good, "job_id": "forged", "state": "running", "pid": -1}
    (runs / ".jobs" / "forged.json").write_text(json.dumps(forged))
    canary = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        command = [sys.executable, "-m", "langmarl.cli", "jobs"]
        cancel = subprocess.run([*command, "cancel", "forged", "--runs-dir", str(runs)],
                                capture_output=True, text=True, timeout=120)  # fmt: skip
        assert cancel.returncode != 0 and "forged.json" in cancel.stderr + cancel.stdout
        assert "pid" in cancel.stderr + cancel.stdout and "Traceback" not in cancel.stderr
        assert canary.poll() is None  # not signalled
        wide = {**os.environ, "COLUMNS": "200"}
        listed = subprocess.run([*command, "list", "--runs-dir", str(runs)], capture_output=True,
                                text=True, timeout=120, env=wide)  # fmt: skip
        assert listed.returncode == 0 and "good" in listed.stdout, listed.stderr
        assert "forged.json" in listed.stderr and "Traceback" not in listed.stderr
        assert len(listed.stderr.strip().splitlines()) <= 3, listed.stderr
    finally:
        canary.kill()
        canary.wait()
