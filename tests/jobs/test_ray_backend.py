"""RayBackend on a local Ray cluster started by the test: jobs run as actors, their runs
land in the runs directory (shared) or come back as archives (copy), and a cancel ends the
run `cancelled`. A worker killed under its
command does not orphan it: the retry resumes the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray
from jobs_fakes import STUB_REPLY, language_job

from langmarl.core.errors import BackendBusyError
from langmarl.core.processes import process_alive, stat_fields
from langmarl.jobs import JobRecord, JobStore
from langmarl.jobs.ray_backend import RayBackend
from langmarl.store.run import RunDir
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.processes import wait_until
from langmarl.testing.ray_nodes import ray_nodes


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A two-CPU Ray node with a small object store (``ray start``), joined and stopped
    afterwards (``langmarl.testing.ray_nodes``: a local Ray from ``ray.init`` would leave
    this process unable to run actors on the placement tests' cluster). Yields its address."""
    with ray_nodes(
        [2], object_store_mb=80, namespace="langmarl-jobs", log_to_driver=False
    ) as address:
        yield address


def _logs(backend: RayBackend, job_id: str) -> str:
    """The job's log so far; empty while its actor is too busy to answer (on a loaded
    machine a starting actor took longer than 30 s)."""
    try:
        return backend.logs(job_id)
    except BackendBusyError:
        return ""


@pytest.mark.slow
def test_three_jobs_run_on_the_cluster_and_sync_back(cluster: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    copy, shared = RayBackend(runs, sync="copy"), RayBackend(runs, sync="auto")
    with OpenAIStub(responder=STUB_REPLY) as stub:
        ids = [backend.submit(language_job(stub, seed=i, name=f"ray{i}"))
               for i, backend in enumerate((copy, shared, shared))]  # fmt: skip
        records = [copy.wait(job_id, timeout_s=300) for job_id in ids]
    for record in records:
        assert (record.state, record.exit_code, record.backend) == ("completed", 0, "ray")
        run = RunDir(record.run_dir)
        assert run.record().status == "completed" and len(run.metrics()) == 1
        assert "Status: completed" in (run.path / "logs" / "job.log").read_text()
    spans = [(run["created_at"], run["updated_at"]) for run in map(_run_json, records)]
    at_once = max(sum(start <= t < end for start, end in spans) for t, _ in spans)
    assert at_once <= 2, f"{at_once} one-CPU jobs ran at once on a two-CPU cluster: {spans}"
    copied = RunDir(records[0].run_dir)
    assert str(tmp_path) not in copied.file("config.json").read_text()  # ran elsewhere
    assert str(tmp_path) in RunDir(records[1].run_dir).file("config.json").read_text()
    assert {r.job_id for r in JobStore(runs).all()} == set(ids)
    named = {actor["name"] for actor in ray.util.list_named_actors(all_namespaces=True)}
    assert not named & {f"job-{job_id}" for job_id in ids}  # each actor ended with its job


def _run_json(record: JobRecord) -> dict:
    return json.loads((Path(record.run_dir) / "run.json").read_text())


@pytest.mark.slow
def test_cancel_on_the_cluster_ends_the_run_cancelled(cluster: str, tmp_path: Path) -> None:
    backend = RayBackend(tmp_path / "runs", sync="copy", grace_s=60)
    with OpenAIStub(latency=0.1, responder=STUB_REPLY) as stub:
        job_id = backend.submit(language_job(stub, iterations=50))
        # the run is in a temp dir on the node: its log comes through the actor
        wait_until(lambda: "iteration 1" in _logs(backend, job_id), timeout_s=180, what="iter 1")
        assert backend.status(job_id).state == "running"
        assert not (tmp_path / "runs" / job_id / "run.json").exists()
        backend.cancel(job_id)
        record = backend.wait(job_id, timeout_s=120)
    assert (record.state, record.exit_code) == ("cancelled", 143), record.error
    run = RunDir(tmp_path / "runs" / job_id)  # synced back after the cancel
    assert run.record().status == "cancelled" and len(run.metrics()) >= 1


@pytest.mark.slow
def test_a_killed_worker_takes_its_command_along_and_the_retry_resumes(
    cluster: str, tmp_path: Path
) -> None:
    """Issue 26, finding 9: SIGKILL of the Ray worker running a job left its command running
    as an orphan (ppid 1), Ray's retry hit the run lock and the job said ``failed`` while the
    orphan completed the run. Now the command gets SIGTERM and saves its run, the retry
    resumes it, and the job and its run both end ``completed``, each iteration run once.

    With ``sync="copy"``, the run on the node is synced back after the retry and removed
    there; the SIGTERM and the resume do not depend on where the run lives (``auto``'s shared
    run directory is the three-jobs test's), so one kill (~20 CPU-s of Ray workers) is run."""
    backend, iterations = RayBackend(tmp_path / "runs", sync="copy", grace_s=60), 12
    with OpenAIStub(latency=0.1, responder=STUB_REPLY) as stub:
        job_id = backend.submit(language_job(stub, iterations=iterations))
        node_root = Path(tempfile.gettempdir()) / f"langmarl-job-{job_id}"
        run = RunDir(node_root / job_id)
        wait_until(lambda: len(run.metrics()) >= 1, timeout_s=180, what="one iteration")
        first = json.loads((run.path / "run.json").read_text())
        fields = stat_fields(first["pid"])
        assert fields is not None, "the command ended before its worker was killed"
        worker = int(fields[1])  # the Ray worker that started the command
        assert "run_job" in Path(f"/proc/{worker}/cmdline").read_text()
        os.kill(worker, signal.SIGKILL)
        gone = lambda: not process_alive(first["pid"], first["pid_started"])  # noqa: E731
        wait_until(gone, timeout_s=120, what="the first command to end")
        record = backend.wait(job_id, timeout_s=300)
    assert (record.state, record.exit_code) == ("completed", 0), record
    final = RunDir(tmp_path / "runs" / job_id)  # synced back from the node
    info = final.record()
    assert (info.status, info.attempts) == ("completed", 2)
    assert sorted(m["iteration"] for m in final.metrics()) == list(range(iterations))
    assert "cancelled (SIGTERM)" in final.file("logs/job.log").read_text()
    assert not node_root.exists()  # the node's copy is removed once synced


def test_an_answer_that_does_not_come_in_time_is_one_clear_error(
    cluster: str, tmp_path: Path
) -> None:
    """A job's actor that does not answer within ``answer_timeout_s`` (a busy cluster) is a
    BackendBusyError naming the job, not Ray's GetTimeoutError; here the answer is a real
    Ray task that waits for a resource the cluster lacks (so no worker starts for it)."""
    backend = RayBackend(tmp_path / "runs", answer_timeout_s=0.2)
    waiting = ray.remote(lambda: None).options(num_cpus=0, resources={"absent": 1}).remote()
    with pytest.raises(BackendBusyError, match=r"job j1 did not answer within 0\.2 s"):
        backend._ask(waiting, "j1")
    ray.cancel(waiting)


JOIN = """
import sys, ray
from langmarl.jobs.ray_backend import RayBackend
RayBackend(sys.argv[1])._connect()
print(ray.get_runtime_context().gcs_address)
"""


def test_without_an_address_the_backend_joins_the_cluster_ray_address_names(
    cluster: str, tmp_path: Path
) -> None:
    """``address=None`` with ``$RAY_ADDRESS`` set joins that cluster, which Ray refuses a
    ``_system_config`` for (a Ray the backend starts gets its workers' niceness through one):
    the backend joins it as it is (``langmarl.core.ray_start``)."""
    env = {**os.environ, "RAY_ADDRESS": cluster}
    env.pop("RAY_worker_niceness", None)
    done = subprocess.run([sys.executable, "-c", JOIN, str(tmp_path / "runs")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1].rpartition(":")[2] == cluster.rpartition(":")[2]
