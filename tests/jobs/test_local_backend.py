"""LocalBackend: real job processes against a real HTTP stub LLM; records other processes
read; cores pinned per job and queued when taken; a graceful cancel."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from pathlib import Path

import pytest
from jobs_fakes import STUB_REPLY, language_job

from langmarl.core.errors import ConfigError
from langmarl.jobs import JobSpec, JobStore, LocalBackend, Resources
from langmarl.store.run import RunDir
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.processes import wait_until


def test_a_language_job_completes_in_its_run_dir(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "runs", max_cpus=1)
    with OpenAIStub(responder=STUB_REPLY) as stub:
        job_id = backend.submit(language_job(stub, seed=3, name="qa run"))
        assert job_id.startswith("qa-run-")
        record = backend.wait(job_id, timeout_s=180)
    assert (record.state, record.exit_code, record.error) == ("completed", 0, None)
    run = RunDir(record.run_dir)
    assert Path(record.run_dir) == (tmp_path / "runs" / job_id).resolve()
    assert run.record().status == "completed" and len(run.metrics()) == 1
    assert json.loads((Path(record.run_dir) / "config.json").read_text())["seed"] == 3
    assert "Status: completed" in backend.logs(job_id)
    assert backend.logs(job_id, tail=1).count("\n") <= 1
    # another process (a fresh backend) sees the same job, and its pinned core
    [listed] = LocalBackend(tmp_path / "runs").list()
    assert (listed.job_id, listed.state, listed.cores) == (job_id, "completed", [])
    assert JobStore(tmp_path / "runs").read(job_id).ended_at is not None


def test_an_invalid_config_fails_at_submission_naming_the_field(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "runs")
    spec = JobSpec(kind="language", config={"env": "language", "trajectories_per_iteration": 0})
    with pytest.raises(ConfigError, match="trajectories_per_iteration"):
        backend.submit(spec)
    with pytest.raises(ConfigError, match=r"resources\.cpus=64"):
        backend.submit(JobSpec(kind="language", resources=Resources(cpus=64)))
    assert backend.list() == []


def test_cores_are_pinned_jobs_queue_and_a_queued_cancel_never_starts(tmp_path: Path) -> None:
    backend = LocalBackend(tmp_path / "runs", max_cpus=1)
    with OpenAIStub(latency=0.1, responder=STUB_REPLY) as stub:
        first = backend.submit(language_job(stub, iterations=2))
        second, third = backend.submit(language_job(stub)), backend.submit(language_job(stub))
        wait_until(lambda: backend.status(first).state == "running", what="first running")
        assert backend.status(first).cores == [sorted(os.sched_getaffinity(0))[0]]
        assert backend.status(second).state == backend.status(third).state == "queued"
        backend.cancel(second)
        assert backend.wait(second, timeout_s=30).state == "cancelled"
        done = backend.wait(third, timeout_s=240)
    first_done = backend.status(first)
    assert first_done.state == done.state == "completed"
    assert done.started_at is not None and first_done.ended_at is not None
    assert done.started_at >= first_done.ended_at - 0.5  # it waited for the core
    assert not (tmp_path / "runs" / second / "run.json").exists()


def test_cancel_ends_the_run_cancelled_with_its_files_intact(tmp_path: Path) -> None:
    """Also when SIGTERMs keep coming (a cancel repeated, a machine shutting down): the
    supervisor's handler once set a ``threading.Event``, whose lock a second SIGTERM's handler
    could wait for forever."""
    backend = LocalBackend(tmp_path / "runs", grace_s=60)
    with OpenAIStub(latency=0.2, responder=STUB_REPLY) as stub:
        job_id = backend.submit(language_job(stub, iterations=50))
        run = RunDir(tmp_path / "runs" / job_id)
        wait_until(lambda: len(run.metrics()) >= 1, timeout_s=180, what="one iteration")
        supervisor = backend.status(job_id).pid
        assert supervisor is not None
        backend.cancel(job_id)
        for _ in range(2000):
            with contextlib.suppress(ProcessLookupError):
                os.kill(supervisor, signal.SIGTERM)
        record = backend.wait(job_id, timeout_s=120)
    assert record.state == "cancelled" and record.exit_code == 143, backend.logs(job_id)
    info = run.record()
    assert info.status == "cancelled" and info.error == "cancelled (SIGTERM)"
    assert run.events()[-1]["event"] == "run_end"
    assert not list(run.path.rglob(".*.tmp"))
    for path in run.path.rglob("*.json"):
        json.loads(path.read_text())  # every JSON file is whole


@pytest.mark.parametrize(
    ("killed", "expected"),
    [("command", "failed"), ("supervisor", "cancelled"), ("supervisor, then cancel", "cancelled")],
)
def test_a_killed_job_ends_as_its_run_says(tmp_path: Path, killed: str, expected: str) -> None:
    """SIGKILL of the command: the job and its run are ``failed``. SIGKILL of the supervisor
    (issue 26, finding 9): the command no longer runs on unwatched (a cancel then said
    ``cancelled`` while the run went on to ``completed``); it gets SIGTERM, and the job and its
    run both end ``cancelled``."""
    from langmarl.core.processes import process_alive

    backend = LocalBackend(tmp_path / "runs", grace_s=60)
    with OpenAIStub(latency=0.1, responder=STUB_REPLY) as stub:
        job_id = backend.submit(language_job(stub, iterations=50))
        run = RunDir(tmp_path / "runs" / job_id)
        wait_until(lambda: len(run.metrics()) >= 1, timeout_s=180, what="one iteration")
        record = backend.status(job_id)
        assert record.command_pid is not None and record.pid is not None
        if killed == "command":
            os.killpg(record.command_pid, signal.SIGKILL)
        else:
            os.kill(record.pid, signal.SIGKILL)
        if killed.endswith("cancel"):
            backend.cancel(job_id)
        gone = lambda: not process_alive(record.command_pid, record.command_started)  # noqa: E731
        wait_until(gone, timeout_s=120, what="the command to end")
        wait_until(lambda: backend.status(job_id).done, timeout_s=60, what="the job ended")
    final = backend.status(job_id)
    assert (final.state, run.record().status) == (expected, expected), final
    assert len(run.metrics()) < 50  # it did not run on to the end
