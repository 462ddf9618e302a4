"""Job records: one JSON file per job under ``<runs_dir>/.jobs/``, so every process that
opens the runs directory (``langmarl jobs list``, the web API, the job's own supervisor)
sees the same jobs.

::

    <runs_dir>/
      .jobs/<job_id>.json          the JobRecord (written atomically, under .jobs/.lock)
      .jobs/configs/<job_id>.json  the config the command reads (overrides applied)
      <job_id>/                    the run (p2p: the session), any kind placed alike
      <job_id>/logs/job.log        the command's stdout and stderr

A record's state is made true when read (:func:`settle`): a ``queued`` or ``running`` job
whose process is gone ended without saying how, so its run's ``run.json`` decides.

A cancel asked for decides from the request, not from a race with the command's exit: unless
the run recorded ``completed`` or a failure of its own, the job is ``cancelled``, and a run
whose process ended still saying ``running`` is recorded ``cancelled`` too (:func:`outcome`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from langmarl.core.errors import ConfigError, LangmarlError, RunFileError
from langmarl.core.files import atomic_write_text, exclusive_lock, load_json_file
from langmarl.core.processes import process_alive
from langmarl.jobs.spec import JobSpec
from langmarl.store.run import RUN_FILE, RunDir, true_status

JobState = Literal["queued", "running", "completed", "failed", "cancelled"]
FINAL_STATES: tuple[str, ...] = ("completed", "failed", "cancelled")
JOBS_DIR = ".jobs"
LOG_FILE = "logs/job.log"
KILLED_HINT = "the job was killed; resume its run with the kind's command or submit it again"
CANCELLED_UNRECORDED = "cancelled on request (its process ended before recording it)"
"""The error of a cancelled job's run that the job layer recorded ``cancelled``."""
CANCEL_UNFINISHED = ("running", "stopped", "cancelled", None)
"""Raw ``run.json`` statuses (``None``: no run yet) with which a cancel asked for makes the
job ``cancelled``: the run neither completed nor recorded a failure of its own."""

log = logging.getLogger(__name__)


def config_file(runs_dir: Path, job_id: str) -> Path:
    """Where the config a job's command reads is written."""
    return runs_dir / JOBS_DIR / "configs" / f"{job_id}.json"


class JobRecord(BaseModel):
    """A job and what became of it (what :meth:`Backend.status` returns)."""

    job_id: str
    spec: JobSpec
    backend: Literal["local", "ray"]
    state: JobState = "queued"
    run_dir: str
    """Where the run lands: ``<runs_dir>/<job_id>`` (for p2p jobs recorded before every kind
    was placed alike: the directory holding the session)."""
    log_path: str
    """The command's stdout and stderr."""
    extra_args: list[str] = Field(default_factory=list)
    """Arguments after the config: only jobs recorded before every kind was placed by its
    config's ``runs_dir``/``run_id`` have any (language: ``--run-id <job_id>``)."""
    exit_code: int | None = None
    error: str | None = None
    """Why the job failed or was cancelled."""
    submitted_at: float = Field(default_factory=time.time)
    started_at: float | None = None
    ended_at: float | None = None
    pid: int | None = Field(default=None, gt=1)
    """The process watching the job (local: its supervisor), for liveness. Above 1: 0 and
    negative numbers name process groups to ``kill``, 1 is init."""
    pid_started: str | None = None
    command_pid: int | None = Field(default=None, gt=1)
    """Local backend: the command's process (it outlives a killed supervisor)."""
    command_started: str | None = None
    cores: list[int] = Field(default_factory=list)
    """Local backend: the cores the job is pinned to while it runs."""
    cancel_requested: bool = False
    ray: dict[str, str] = Field(default_factory=dict)
    """Ray backend: address, namespace and actor name."""

    @property
    def done(self) -> bool:
        return self.state in FINAL_STATES


class JobStore:
    """The job records of one runs directory."""

    def __init__(self, runs_dir: str | Path) -> None:
        self.runs_dir = Path(runs_dir).resolve()
        self.dir = self.runs_dir / JOBS_DIR

    def path(self, job_id: str) -> Path:
        return self.dir / f"{job_id}.json"

    def config_path(self, job_id: str) -> Path:
        return config_file(self.runs_dir, job_id)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the records' lock (read-modify-write by several processes)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(self.dir / ".lock"):
            yield

    def write(self, record: JobRecord) -> None:
        atomic_write_text(self.path(record.job_id), record.model_dump_json(indent=2) + "\n")

    def read(self, job_id: str) -> JobRecord:
        """The record as written.

        Raises:
            ConfigError: if there is no such job.
        """
        path = self.path(job_id)
        if not path.is_file():
            raise ConfigError(
                f"no job {job_id!r} in {self.dir}: see `langmarl jobs list --runs-dir "
                f"{self.runs_dir}` for the jobs there"
            )
        try:
            return JobRecord.model_validate(load_json_file(path))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "the record"
            raise RunFileError(
                path,
                f"not a job record ({field}: {first['msg']})",
                "Delete the file (the job is forgotten; its run directory stays)",
            ) from None

    def update(self, job_id: str, **fields: Any) -> JobRecord:
        """Merge ``fields`` into the record (under the lock) and return it."""
        with self.locked():
            record = self.read(job_id).model_copy(update=fields)
            self.write(record)
        return record

    def all(self) -> list[JobRecord]:
        """Every readable record, newest first; an unreadable one is logged and left out."""
        if not self.dir.is_dir():
            return []
        records = []
        for path in self.dir.glob("*.json"):
            try:
                records.append(self.read(path.stem))
            except RunFileError as exc:
                log.warning("%s", exc)
        return sorted(records, key=lambda r: r.submitted_at, reverse=True)


def run_file(run_dir: str | Path) -> tuple[Path, dict[str, Any]] | None:
    """Where the job's run keeps ``run.json`` (in the session inside, for p2p jobs recorded
    before sessions were placed like every run) and what it says; ``None`` before one."""
    root = Path(run_dir)
    for candidate in (root / RUN_FILE, *sorted(root.glob(f"*/{RUN_FILE}"))):
        with contextlib.suppress(OSError, ValueError, ConfigError):
            info = load_json_file(candidate)
            if isinstance(info, dict):
                return candidate, info
    return None


def run_info(run_dir: str | Path) -> dict[str, Any] | None:
    """The ``run.json`` of the job's run as written (:func:`run_file`), ``None`` before one."""
    found = run_file(run_dir)
    return found[1] if found is not None else None


def run_state(run_dir: str | Path) -> dict[str, Any]:
    """The job's run's ``run.json`` with its status made true (a ``running`` run whose
    process is gone reads ``failed``); empty before the run has one."""
    return true_status(run_info(run_dir) or {}, KILLED_HINT)


def log_tail(path: str | Path, lines: int = 5) -> str:
    """The last ``lines`` lines of a log (empty if there is none)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def outcome(record: JobRecord, exit_code: int | None) -> dict[str, Any]:
    """The final fields of a job that ended with ``exit_code`` (None: unknown, the watching
    process is gone), agreeing with its run's ``run.json``: a run that completed is
    ``completed`` if the command exited 0 or a cancel was asked for (too late: it changes
    nothing, whatever exit code it caused); with a cancel asked for, a run that did not
    record a failure of its own is ``cancelled`` (one still ``running`` with its process gone
    is recorded ``cancelled``: :meth:`RunDir.end_cancelled`); a run cancelled without one (a
    SIGTERM) is ``cancelled``; exit 0 with a run that did not fail is ``completed``; anything
    else ``failed``, with the run's error or the log's tail."""
    found = run_file(record.run_dir)
    recorded = found[1].get("status") if found is not None else None
    info = true_status(found[1] if found is not None else {}, KILLED_HINT)
    fields: dict[str, Any] = {"exit_code": exit_code, "ended_at": time.time(), "cores": []}
    if recorded == "completed" and (exit_code in (0, None) or record.cancel_requested):
        return fields | {"state": "completed", "error": None}
    if record.cancel_requested and recorded in CANCEL_UNFINISHED:
        if found is not None and recorded == "running":
            _record_cancelled(found[0].parent)
        return fields | {"state": "cancelled", "error": "cancelled on request"}
    if info.get("status") == "cancelled":  # SIGTERM without a cancel: its watcher ended
        return fields | {"state": "cancelled", "error": f"stopped by SIGTERM: {KILLED_HINT}"}
    if exit_code == 0 and info.get("status") not in ("failed", "stopped", "cancelled"):
        return fields | {"state": "completed", "error": None}
    reason = info.get("error") or (
        f"exit code {exit_code}" if exit_code is not None else "its process ended unrecorded"
    )
    tail = log_tail(record.log_path, 3)
    return fields | {"state": "failed", "error": f"{reason}" + (f"\n{tail}" if tail else "")}


def _record_cancelled(run_dir: Path) -> None:
    """Record the run of a job cancelled on request ``cancelled`` if its process ended still
    saying ``running`` (a live one is left alone); a run that cannot be written is logged."""
    try:
        RunDir(run_dir).end_cancelled(CANCELLED_UNRECORDED)
    except LangmarlError as exc:
        log.warning("could not record the cancelled run in %s: %s", run_dir, exc)


def settle(store: JobStore, record: JobRecord) -> JobRecord:
    """``record`` with its state made true: an unfinished job whose supervisor and command
    are both gone is finished from its run's ``run.json`` (and the record updated)."""
    if record.done or record.backend != "local" or record.pid is None:
        return record
    if process_alive(record.pid, record.pid_started):
        return record
    command = record.command_pid
    if command is not None and process_alive(command, record.command_started):
        return record  # its supervisor was killed, but the run goes on
    with store.locked():
        current = store.read(record.job_id)
        if current.done:
            return current
        settled = current.model_copy(update=outcome(current, None))
        store.write(settled)
    return settled
