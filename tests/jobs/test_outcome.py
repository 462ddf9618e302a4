"""`outcome`: a job's final state agrees with its run, and a cancel asked for decides from
the request, not from a race with the command's exit (issue 37: a run killed by its own
cancel before it recorded it ended the job `failed`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from langmarl.jobs import JobRecord, JobSpec
from langmarl.jobs.records import CANCELLED_UNRECORDED, outcome
from langmarl.store.run import RUN_FILE, RunDir

DEAD_PID = 2**22 + 12345
"""Above the kernel's largest pid (4194304): never alive."""


def _job(tmp_path: Path, cancel_requested: bool = True) -> JobRecord:
    run_dir = tmp_path / "runs" / "job-1"
    return JobRecord(
        job_id="job-1", spec=JobSpec(kind="language"), backend="local", run_dir=str(run_dir),
        log_path=str(run_dir / "logs" / "job.log"), cancel_requested=cancel_requested,
    )  # fmt: skip


def _run(job: JobRecord, status: str, pid: int = DEAD_PID) -> RunDir:
    """The job's run, its ``run.json`` saying ``status`` (``failed``: error ``boom``), with
    process ``pid`` (written as is: SIGTERM in this process changes no status here)."""
    run = RunDir(job.run_dir)
    info = run.start("language")
    started = "1" if pid == DEAD_PID else info["pid_started"]
    error = "boom" if status == "failed" else None
    run.write_json(RUN_FILE, info | {"status": status, "error": error, "pid": pid,
                                     "pid_started": started})  # fmt: skip
    return run


def test_a_cancelled_run_killed_before_recording_it_ends_cancelled_and_says_so(
    tmp_path: Path,
) -> None:
    job = _job(tmp_path)
    run = _run(job, "running")
    fields = outcome(job, 143)
    assert (fields["state"], fields["error"]) == ("cancelled", "cancelled on request")
    assert run.read()["status"] == "cancelled"  # type: ignore[index]
    record = run.record()
    assert (record.status, record.error) == ("cancelled", CANCELLED_UNRECORDED)
    assert run.events()[-1] | {"time": 0} == {
        "time": 0, "event": "run_end", "status": "cancelled", "error": CANCELLED_UNRECORDED,
    }  # fmt: skip


def test_a_cancel_leaves_a_run_whose_process_lives_as_it_is(tmp_path: Path) -> None:
    job = _job(tmp_path)
    run = _run(job, "running", pid=os.getpid())
    assert outcome(job, None)["state"] == "cancelled"
    assert run.read()["status"] == "running"  # type: ignore[index]


@pytest.mark.parametrize(
    ("status", "state"),
    [("stopped", "cancelled"), ("cancelled", "cancelled"), ("failed", "failed"),
     ("completed", "completed")],
)  # fmt: skip
@pytest.mark.parametrize("exit_code", [143, -9, None])
def test_a_cancel_ends_the_job_cancelled_unless_the_run_ended_on_its_own(
    tmp_path: Path, status: str, state: str, exit_code: int | None
) -> None:
    job = _job(tmp_path)
    run = _run(job, status)
    fields = outcome(job, exit_code)
    assert fields["state"] == state, fields
    assert run.read()["status"] == status  # type: ignore[index]  # the run's own record stays
    if state == "failed":
        assert fields["error"].startswith("boom")


def test_a_cancel_before_the_run_began_ends_the_job_cancelled(tmp_path: Path) -> None:
    job = _job(tmp_path)
    assert outcome(job, None)["state"] == "cancelled"
    assert not Path(job.run_dir).exists()


def test_without_a_cancel_a_dead_running_run_is_a_failed_job(tmp_path: Path) -> None:
    job = _job(tmp_path, cancel_requested=False)
    run = _run(job, "running")
    fields = outcome(job, 143)
    assert fields["state"] == "failed" and "ended without finishing" in fields["error"]
    assert run.read()["status"] == "running"  # type: ignore[index]  # no cancel: not ours to say
