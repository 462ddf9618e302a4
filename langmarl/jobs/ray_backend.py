"""``RayBackend``: each job a detached Ray actor and the Ray task it starts, which runs the
job's command on a cluster node, reserving ``resources.cpus`` (``num_cpus``) and the memory
hint.

::

    submit   record (queued) → actor "job-<id>" (detached: outlives the submitting process)
             → the actor starts the job's task (num_cpus = resources.cpus)
    task     run dir: the same runs dir when the node sees it (shared file system), else a
             temp dir on the node → run the command (SIGTERM on cancel, SIGKILL after
             the grace period) → result: exit code (+ the run dir as a .tar.gz if not shared),
             held by the actor
    status   ask the actor; once it has a result: unpack the run into <runs_dir>/<job_id>
             (synced back), record the outcome, end the actor
    failure  a worker that dies takes its command along (SIGTERM: the run is saved
             ``cancelled``); Ray retries the task, which waits for that save and resumes the
             run (a copy job's run dir on a node is the same for every attempt). A command
             whose actor is gone is stopped as if cancelled.

The actor reserves no CPU; the job's Ray task does, and only while its command runs, so a
finished job never holds cores while it waits to be collected. Ray is imported only here,
and only when a backend is made (the ``ray`` extra). ``sync="auto"`` decides per job: the
task looks for the job's record at the path the submitter wrote it to; ``shared``/``copy``
force one way.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Literal

from langmarl.core.errors import BackendBusyError, ConfigError, MissingDependencyError
from langmarl.core.files import atomic_write_json, load_json_file
from langmarl.core.ray_start import init_ray
from langmarl.jobs.environment import job_environment
from langmarl.jobs.local import StoredJobs
from langmarl.jobs.process import GRACE_S, run_command
from langmarl.jobs.records import JOBS_DIR, LOG_FILE, JobRecord, config_file, outcome, run_state
from langmarl.jobs.spec import JobSpec, command, place
from langmarl.store.lock import LOCK_FILE, RunLock

Sync = Literal["auto", "shared", "copy"]
NAMESPACE = "langmarl-jobs"


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "ray", "The ray job backend") from None
    return ray


class JobRunner:
    """The job's detached actor (no CPUs of its own): starts the job's Ray task, which
    reserves the job's resources only while it runs, and keeps its result and log for the
    submitter, who may be another process, to collect."""

    def __init__(self) -> None:
        self.ref: Any = None
        self.started_at: float | None = None
        self.log = ""

    def start(self, payload: dict[str, Any], options: dict[str, Any]) -> None:
        ray = _ray()
        me = ray.get_runtime_context().current_actor
        self.ref = ray.remote(run_job).options(**options).remote(payload, me)

    def mark_started(self, when: float) -> None:
        self.started_at = when

    def append_log(self, text: str) -> None:
        self.log = (self.log + text)[-LOG_KEPT:]

    def poll(self) -> dict[str, Any]:
        """``{"started_at": t | None, "result": None | {"exit_code", "blob", "error"}}``."""
        ray = _ray()
        if self.ref is None or not ray.wait([self.ref], timeout=0)[0]:
            return {"started_at": self.started_at, "result": None}
        try:
            result = ray.get(self.ref)
        except ray.exceptions.RayError as exc:  # cancelled before it started, worker died
            result = {"exit_code": None, "blob": None, "error": type(exc).__name__}
        return {"started_at": self.started_at, "result": result}

    def cancel(self, job_id: str) -> None:
        """Ask the task to stop: a task still waiting for resources is dropped
        (``ray.cancel``); a running one reads the request (:func:`_stop_flag`), and its
        command gets SIGTERM, then SIGKILL after the grace period; the run still comes
        back."""
        _stop_flag(job_id, "put")
        if self.ref is not None and self.started_at is None:
            _ray().cancel(self.ref)

    def logs(self, tail: int | None = None) -> str:
        return "".join(self.log.splitlines(keepends=True)[-tail:]) if tail is not None else self.log


LOG_KEPT = 1_000_000
"""Characters of a running job's log its actor keeps (for ``logs`` while it runs)."""


def run_job(payload: dict[str, Any], runner: Any) -> dict[str, Any]:
    """The job's Ray task: run the command where the run directory is (shared, or a temp
    dir packed afterwards), report start and log to ``runner`` and stop the command
    gracefully once ``runner`` says so (checked every second)."""
    job_id, spec = payload["job_id"], JobSpec.model_validate(payload["spec"])
    runs_dir = Path(payload["runs_dir"])
    sync: Sync = payload["sync"]
    shared = sync == "shared" or (
        sync == "auto" and (runs_dir / JOBS_DIR / f"{job_id}.json").is_file()
    )
    root = runs_dir if shared else _node_dir(job_id)
    run_dir = root / job_id
    _wait_unlocked(run_dir, payload["grace_s"])  # a retry: the last attempt's command saving
    config = place(payload["config"], run_dir)
    config_path = config_file(root, job_id)
    atomic_write_json(config_path, config)
    log_path = run_dir / LOG_FILE
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = command(spec, config_path, sys.executable, run_dir)  # a retry: the resume command
    stop, outcome_box = threading.Event(), {}

    def work() -> None:
        with open(log_path, "ab") as log:
            outcome_box["code"] = run_command(
                argv, env=job_environment(spec.resources.cpus, spec.env), log=log,
                stop_requested=stop.is_set, grace_s=payload["grace_s"],
            )  # fmt: skip

    runner.mark_started.remote(time.time())
    thread, sent = threading.Thread(target=work, daemon=True), 0
    thread.start()
    while thread.is_alive():
        try:
            thread.join(1.0)
        except KeyboardInterrupt:  # a ray.cancel that raced the start
            stop.set()
        if not stop.is_set() and (_stop_flag(job_id, "get") or _actor_gone(job_id)):
            stop.set()
        sent = _send_log(log_path, sent, runner)
    _send_log(log_path, sent, runner)
    _stop_flag(job_id, "delete")
    blob = None if shared else _pack(run_dir)
    if not shared:
        shutil.rmtree(root, ignore_errors=True)
    return {"exit_code": outcome_box.get("code"), "blob": blob, "error": None}


def _stop_flag(job_id: str, action: Literal["put", "get", "delete"]) -> bool:
    """The job's stop request in the cluster's key-value store (GCS): the actor puts it, the
    task reads it each second, and deletes it at its end.

    Read there, never asked of the actor: a task blocked in ``ray.get`` or ``ray.wait``
    gives its CPUs back to Ray while it waits, and Ray may start another job on them (with
    a question to the actor each second, three one-CPU PPO jobs were measured running at
    once on a two-CPU cluster); a key-value read does not. (``ray.experimental.internal_kv``
    is what Ray's own libraries use for this.)"""
    from ray.experimental import internal_kv

    key = f"stop/{job_id}".encode()
    if action == "put":
        internal_kv._internal_kv_put(key, b"1", namespace=NAMESPACE)
    elif action == "delete":
        internal_kv._internal_kv_del(key, namespace=NAMESPACE)
    return action == "get" and bool(internal_kv._internal_kv_get(key, namespace=NAMESPACE))


def _actor_gone(job_id: str) -> bool:
    """Whether the job's actor is gone (killed, or its node lost): a command never runs on
    unwatched. Looked up by name, never asked (see :func:`_stop_flag`)."""
    try:
        _ray().get_actor(_actor(job_id), namespace=NAMESPACE)
    except ValueError:
        return True
    return False


def _node_dir(job_id: str) -> Path:
    """Where a job that cannot see the runs directory keeps its run on this node: the same
    directory for every attempt, so a task Ray retries after its worker died resumes the run
    (a fresh temp dir if that name is taken by anything but this user's own directory)."""
    root = Path(tempfile.gettempdir()) / f"langmarl-job-{job_id}"
    with contextlib.suppress(FileExistsError):
        root.mkdir(mode=0o700)
    info = root.lstat()
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
        return root
    return Path(tempfile.mkdtemp(prefix="langmarl-job-"))


def _wait_unlocked(run_dir: Path, timeout_s: float) -> None:
    """Wait (up to ``timeout_s``) until no process holds a lock of the run in ``run_dir``
    (or of a session inside, as older p2p jobs had): after a worker died, the command it
    started gets SIGTERM and is still saving its run when Ray retries the task."""
    locks = [RunLock(path.parent) for path in (*run_dir.glob(LOCK_FILE),
                                               *run_dir.glob(f"*/{LOCK_FILE}"))]  # fmt: skip
    deadline = time.monotonic() + timeout_s
    while any(lock.holder() is not None for lock in locks) and time.monotonic() < deadline:
        time.sleep(0.5)


def _send_log(path: Path, sent: int, runner: Any) -> int:
    """Send the log's bytes after ``sent`` to ``runner``; returns the new offset."""
    with open(path, "rb") as handle:
        handle.seek(sent)
        chunk = handle.read()
    if chunk:
        runner.append_log.remote(chunk.decode("utf-8", errors="replace"))
    return sent + len(chunk)


def _pack(run_dir: Path) -> bytes:
    """``run_dir`` as a .tar.gz whose members start with its name."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(run_dir, arcname=run_dir.name)
    return buffer.getvalue()


def _unpack(blob: bytes, runs_dir: Path, job_id: str) -> None:
    """Put a packed run back as ``<runs_dir>/<job_id>`` (members outside it refused)."""
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as archive:
        for member in archive.getmembers():
            if member.name != job_id and not member.name.startswith(f"{job_id}/"):
                raise ConfigError(f"the synced run of job {job_id} holds {member.name!r}")
        archive.extractall(runs_dir, filter="data")


class RayBackend(StoredJobs):
    """Jobs as Ray actors on a cluster.

    Args:
        runs_dir: Where runs land (``<runs_dir>/<job_id>``) and jobs are recorded.
        address: ``None`` (the Ray already initialised in this process, else what
            ``ray.init()`` finds: ``$RAY_ADDRESS``, a Ray started on this machine, or a new
            local one, whose workers run at niceness 0 as local jobs do:
            :mod:`langmarl.core.ray_start`), ``"auto"`` (the cluster this
            node belongs to) or ``"ray://host:10001"``.
        sync: ``auto``, ``shared`` (nodes see ``runs_dir``) or ``copy`` (runs come back as
            archives).
        grace_s: Seconds a cancelled job has to save its run before it is killed.
        answer_timeout_s: How long a job's actor may take to answer ``status``, ``cancel``
            or ``logs`` before :class:`BackendBusyError` says the cluster is busy.
    """

    backend_name = "ray"

    def __init__(
        self,
        runs_dir: str | Path,
        address: str | None = None,
        sync: Sync = "auto",
        grace_s: float = GRACE_S,
        answer_timeout_s: float = 60.0,
    ) -> None:
        super().__init__(runs_dir)
        self.address = address
        self.sync = sync
        self.grace_s = grace_s
        self.answer_timeout_s = answer_timeout_s
        self.ray = _ray()

    def _connect(self) -> None:
        if not self.ray.is_initialized():
            init_ray(self.ray, self.address, namespace=NAMESPACE, include_dashboard=False,
                     log_to_driver=False)  # fmt: skip

    def submit(self, spec: JobSpec) -> str:
        self._connect()
        record = self.new_record(spec)
        payload = {
            "job_id": record.job_id, "spec": spec.model_dump(mode="json"),
            "config": load_json_file(self.store.config_path(record.job_id)),
            "runs_dir": str(self.runs_dir), "sync": self.sync, "grace_s": self.grace_s,
        }  # fmt: skip
        options: dict[str, Any] = {"num_cpus": spec.resources.cpus}
        if spec.resources.memory_gb:
            options["memory"] = int(spec.resources.memory_gb * 2**30)
        actor = (
            self.ray.remote(JobRunner)
            .options(
                name=_actor(record.job_id),
                namespace=NAMESPACE,
                lifetime="detached",
                num_cpus=0,
                max_concurrency=8,
            )
            .remote()
        )
        actor.start.remote(payload, options)
        ray_fields = {"address": self.address or "", "namespace": NAMESPACE,
                      "actor": _actor(record.job_id)}  # fmt: skip
        return self.store.update(record.job_id, ray=ray_fields).job_id

    def _actor_of(self, job_id: str) -> Any:
        self._connect()
        try:
            return self.ray.get_actor(_actor(job_id), namespace=NAMESPACE)
        except ValueError:
            return None

    def status(self, job_id: str) -> JobRecord:
        record = self.store.read(job_id)
        if record.done:
            return record
        actor = self._actor_of(job_id)
        if actor is None:  # its task stops the command; the job ends once the run has
            if run_state(record.run_dir).get("status") == "running":
                return record
            gone = "its Ray actor is gone (the cluster restarted or the actor was killed)"
            return self._finish(record, None, error=gone)
        info = self._ask(actor.poll.remote(), job_id)
        if info["result"] is None:
            if record.state == "queued" and info["started_at"] is not None:
                record = self.store.update(job_id, state="running", started_at=info["started_at"])
            return record
        result = info["result"]
        if result.get("blob") is not None:
            _unpack(result["blob"], self.runs_dir, job_id)
        final = self._finish(record, result["exit_code"], error=result.get("error"))
        self.ray.kill(actor)
        return final

    def _finish(self, record: JobRecord, code: int | None, error: str | None) -> JobRecord:
        with self.store.locked():
            current = self.store.read(record.job_id)
            fields = outcome(current, code)
            if error and fields["state"] == "failed":
                fields["error"] = error
            final = current.model_copy(update=fields)
            self.store.write(final)
        return final

    def cancel(self, job_id: str) -> JobRecord:
        record = self.status(job_id)
        if record.done:
            return record
        record = self.store.update(job_id, cancel_requested=True)
        actor = self._actor_of(job_id)
        if actor is not None:
            self._ask(actor.cancel.remote(job_id), job_id)
        return record

    def logs(self, job_id: str, tail: int | None = None) -> str:
        record = self.store.read(job_id)
        if record.done or Path(record.log_path).is_file():
            return super().logs(job_id, tail)
        actor = self._actor_of(job_id)
        return "" if actor is None else str(self._ask(actor.logs.remote(tail), job_id))

    def _ask(self, reply: Any, job_id: str) -> Any:
        """The actor's answer, or :class:`BackendBusyError` after ``answer_timeout_s``."""
        try:
            return self.ray.get(reply, timeout=self.answer_timeout_s)
        except self.ray.exceptions.GetTimeoutError:
            raise BackendBusyError(
                f"the Ray actor of job {job_id} did not answer within "
                f"{self.answer_timeout_s:g} s (a busy cluster); nothing changed: try again"
            ) from None


def _actor(job_id: str) -> str:
    return f"job-{job_id}"
