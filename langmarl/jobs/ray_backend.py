"""``RayBackend``: each job a detached Ray actor that runs the job's command on a cluster
node, reserving ``resources.cpus`` (``num_cpus``) and the memory hint.

::

    submit   record (queued) → actor "job-<id>" (detached: outlives the submitting process)
    actor    run dir: the same runs dir when the node sees it (shared file system), else a
             temp dir on the node → run the command (SIGTERM on cancel, SIGKILL after
             the grace period) → result: exit code (+ the run dir as a .tar.gz if not shared)
    status   ask the actor; once it has a result: unpack the run into <runs_dir>/<job_id>
             (synced back), record the outcome, end the actor

Ray is imported only here, and only when a backend is made (the ``ray`` extra).
``sync="auto"`` decides per job: the actor looks for the job's record at the path the
submitter wrote it to; ``shared``/``copy`` force one way.
"""

from __future__ import annotations

import io
import shutil
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Literal

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.core.files import atomic_write_json, load_json_file
from langmarl.jobs.local import StoredJobs
from langmarl.jobs.process import GRACE_S, job_environment, run_command
from langmarl.jobs.records import JOBS_DIR, LOG_FILE, JobRecord, config_file, outcome
from langmarl.jobs.spec import KINDS, JobSpec, command

Sync = Literal["auto", "shared", "copy"]
NAMESPACE = "langmarl-jobs"


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingDependencyError("ray", "ray", "The ray job backend") from None
    return ray


class JobRunner:
    """The actor's body: runs one job in a thread from the start, answers polls meanwhile.

    Args:
        payload: ``job_id``, ``spec`` (JSON), ``config`` (resolved), ``runs_dir`` (the
            submitter's), ``sync``, ``grace_s``.
    """

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.stop = threading.Event()
        self.result: dict[str, Any] | None = None
        self.started_at = time.time()
        self.log_path: Path | None = None
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        job_id, spec = self.payload["job_id"], JobSpec.model_validate(self.payload["spec"])
        runs_dir = Path(self.payload["runs_dir"])
        sync: Sync = self.payload["sync"]
        shared = sync == "shared" or (
            sync == "auto" and (runs_dir / JOBS_DIR / f"{job_id}.json").is_file()
        )
        root = runs_dir if shared else Path(tempfile.mkdtemp(prefix="langmarl-job-"))
        run_dir = root / job_id
        config, extra = KINDS[spec.kind].place(self.payload["config"], run_dir)
        config_path = config_file(root, job_id)
        atomic_write_json(config_path, config)
        self.log_path = run_dir / LOG_FILE
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        argv = command(spec, config_path, extra, sys.executable)
        try:
            with open(self.log_path, "ab") as log:
                code = run_command(
                    argv, env=job_environment(spec.resources.cpus), log=log,
                    stop_requested=self.stop.is_set, grace_s=self.payload["grace_s"],
                )  # fmt: skip
        except OSError as exc:
            self.result = {"exit_code": None, "shared": shared, "error": str(exc)}
            return
        blob = None if shared else _pack(run_dir)
        if not shared:
            shutil.rmtree(root, ignore_errors=True)
        self.result = {"exit_code": code, "shared": shared, "blob": blob}

    def poll(self) -> dict[str, Any]:
        """``{"started_at": t, "result": None | {"exit_code", "shared", "blob"}}``."""
        return {"started_at": self.started_at, "result": self.result}

    def cancel(self) -> None:
        self.stop.set()

    def logs(self, tail: int | None = None) -> str:
        if self.log_path is None or not self.log_path.is_file():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "".join(text.splitlines(keepends=True)[-tail:]) if tail is not None else text


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
        address: ``None`` (connect to the Ray already initialised in this process, else
            start a local one), ``"auto"`` (the cluster this node belongs to) or
            ``"ray://host:10001"``.
        sync: ``auto``, ``shared`` (nodes see ``runs_dir``) or ``copy`` (runs come back as
            archives).
        grace_s: Seconds a cancelled job has to save its run before it is killed.
    """

    backend_name = "ray"

    def __init__(
        self,
        runs_dir: str | Path,
        address: str | None = None,
        sync: Sync = "auto",
        grace_s: float = GRACE_S,
    ) -> None:
        super().__init__(runs_dir)
        self.address = address
        self.sync = sync
        self.grace_s = grace_s
        self.ray = _ray()

    def _connect(self) -> None:
        if not self.ray.is_initialized():
            self.ray.init(address=self.address, namespace=NAMESPACE, include_dashboard=False,
                          log_to_driver=False)  # fmt: skip

    def submit(self, spec: JobSpec) -> str:
        self._connect()
        record = self.new_record(spec)
        payload = {
            "job_id": record.job_id, "spec": spec.model_dump(mode="json"),
            "config": load_json_file(self.store.config_path(record.job_id)),
            "runs_dir": str(self.runs_dir), "sync": self.sync, "grace_s": self.grace_s,
        }  # fmt: skip
        options: dict[str, Any] = {"name": _actor(record.job_id), "namespace": NAMESPACE,
                                   "lifetime": "detached", "num_cpus": spec.resources.cpus,
                                   "max_concurrency": 4}  # fmt: skip
        if spec.resources.memory_gb:
            options["memory"] = int(spec.resources.memory_gb * 2**30)
        self.ray.remote(JobRunner).options(**options).remote(payload)
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
        if actor is None:
            gone = "its Ray actor is gone (the cluster restarted or the actor was killed)"
            return self._finish(record, None, error=gone)
        ref = actor.poll.remote()
        ready, _ = self.ray.wait([ref], timeout=1.0)
        if not ready:  # the actor waits for its resources
            return record
        info = self.ray.get(ref)
        if info["result"] is None:
            if record.state == "queued":
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
        if actor is not None and record.state == "queued":
            self.ray.kill(actor)  # never started: nothing to save
            return self._finish(record, None, error=None)
        if actor is not None:
            actor.cancel.remote()
        return record

    def logs(self, job_id: str, tail: int | None = None) -> str:
        record = self.store.read(job_id)
        if record.done or Path(record.log_path).is_file():
            return super().logs(job_id, tail)
        actor = self._actor_of(job_id)
        return "" if actor is None else str(self.ray.get(actor.logs.remote(tail), timeout=30))


def _actor(job_id: str) -> str:
    return f"job-{job_id}"
