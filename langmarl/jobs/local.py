"""``LocalBackend``: each job a process on this machine, pinned to its own cores.

A job is started through :mod:`langmarl.jobs.supervisor` in a new session, so it outlives
the process that submitted it (``langmarl jobs submit`` without ``--wait``); that supervisor
waits for free cores, runs the command and records how it ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from langmarl.core.processes import process_alive, process_start
from langmarl.jobs.cores import check_fits, core_pool
from langmarl.jobs.process import GRACE_S
from langmarl.jobs.records import LOG_FILE, JobRecord, JobStore, settle
from langmarl.jobs.spec import JobSpec, new_job_id, resolve_config


class StoredJobs:
    """What every backend does the same way over the job records of a runs directory."""

    backend_name: str = "local"

    def __init__(self, runs_dir: str | Path) -> None:
        self.store = JobStore(runs_dir)
        self.runs_dir = self.store.runs_dir

    def new_record(self, spec: JobSpec) -> JobRecord:
        """Validate ``spec``, write its config file and its ``queued`` record.

        Raises:
            ConfigError: for an invalid config, naming the field and the fix.
        """
        job_id = new_job_id(spec)
        run_dir = self.runs_dir / job_id
        config = resolve_config(spec, run_dir)
        record = JobRecord(
            job_id=job_id, spec=spec, backend=self.backend_name,  # type: ignore[arg-type]
            run_dir=str(run_dir), log_path=str(run_dir / LOG_FILE),
        )  # fmt: skip
        from langmarl.core.files import atomic_write_json

        atomic_write_json(self.store.config_path(job_id), config)
        with self.store.locked():
            self.store.write(record)
        return record

    def status(self, job_id: str) -> JobRecord:
        return self.store.read(job_id)

    def list(self) -> list[JobRecord]:
        return [self.status(record.job_id) for record in self.store.all()]

    def logs(self, job_id: str, tail: int | None = None) -> str:
        path = Path(self.store.read(job_id).log_path)
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        if tail is None:
            return text
        return "".join(text.splitlines(keepends=True)[-tail:]) if tail > 0 else ""

    def wait(self, job_id: str, timeout_s: float | None = None) -> JobRecord:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while not (record := self.status(job_id)).done:
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} still {record.state} after {timeout_s} s")
            time.sleep(0.1)
        return record


class LocalBackend(StoredJobs):
    """Jobs as local processes, each pinned to ``resources.cpus`` free cores.

    Args:
        runs_dir: Where runs land (``<runs_dir>/<job_id>``) and jobs are recorded.
        max_cpus: Cores the jobs share (default: every core this process may use).
        grace_s: Seconds a cancelled job has to save its run before it is killed.
    """

    backend_name = "local"

    def __init__(
        self, runs_dir: str | Path, max_cpus: int | None = None, grace_s: float = GRACE_S
    ) -> None:
        super().__init__(runs_dir)
        self.max_cpus = max_cpus
        self.grace_s = grace_s
        self._children: dict[str, subprocess.Popen[bytes]] = {}

    def submit(self, spec: JobSpec) -> str:
        check_fits(spec.resources.cpus, core_pool(self.max_cpus))
        record = self.new_record(spec)
        log = Path(record.log_path)
        log.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "langmarl.jobs.supervisor", str(self.runs_dir),
                record.job_id, "--grace", str(self.grace_s)]  # fmt: skip
        if self.max_cpus:
            argv += ["--max-cpus", str(self.max_cpus)]
        with self.store.locked(), open(log, "ab") as out:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
            current = self.store.read(record.job_id)  # the supervisor waits for this lock
            pid_fields = {"pid": child.pid, "pid_started": process_start(child.pid)}
            self.store.write(current.model_copy(update=pid_fields))
        self._children[record.job_id] = child
        return record.job_id

    def status(self, job_id: str) -> JobRecord:
        child = self._children.get(job_id)
        if child is not None and child.poll() is not None:  # reaped: a zombie looks alive
            del self._children[job_id]
        return settle(self.store, self.store.read(job_id))

    def cancel(self, job_id: str) -> JobRecord:
        if self.status(job_id).done:
            return self.status(job_id)
        record = self.store.update(job_id, cancel_requested=True)
        if record.pid and process_alive(record.pid, record.pid_started):
            with contextlib.suppress(ProcessLookupError):
                os.kill(record.pid, signal.SIGTERM)
        elif record.command_pid and process_alive(record.command_pid, record.command_started):
            with contextlib.suppress(ProcessLookupError):  # its supervisor is gone
                os.kill(record.command_pid, signal.SIGTERM)
        return self.status(job_id)
