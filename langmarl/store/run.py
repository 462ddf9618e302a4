"""The run contract: what one run directory holds, whichever space trained it.

Every space (language, PARL in language and weight space, MAGRPO/IAC/MAAC, Prompt2Policy
sessions) writes the same core files::

    <run dir>/
      run.json            the RunRecord: schema_version, kind, status (running, completed,
                          failed, stopped, cancelled) with its error, config (secrets scrubbed),
                          created_at/updated_at, code version (langmarl + git commit),
                          pid (+ its start time, for liveness), attempts; per kind extras
      metrics.jsonl       ONE metrics stream: a line per step (or iteration) {"step": N, ...}
      logs/events.jsonl   ONE events stream: {"time": t, "event": name, ...}
      .lock               RunLock: one process per run
      ...                 checkpoints and artifacts of the kind (policies/, checkpoints/,
                          heldout.json, reward_fn.py, videos, curves.png)

Decisions:

* Every file is written atomically (temp file + rename; JSONL lines appended and fsynced)
  and passes the run's :class:`Redactor` first.
* A ``running`` status whose process is gone (SIGKILL, a crash) reads as ``failed``, with an
  error saying how to resume; ``run.json`` on disk is left as it was, except after a job's
  cancel: the job layer, which knows the cancel was asked for, records it ``cancelled``
  (:meth:`RunDir.end_cancelled`).
* Ctrl-C ends a run ``stopped``; SIGTERM (``langmarl jobs cancel``, a cluster scheduler)
  ends it ``cancelled``. Both unwind the same way (:class:`RunCancelled` is a
  ``KeyboardInterrupt``, so every handler of Ctrl-C saves what it can for SIGTERM too); the
  status is chosen in one place, :meth:`RunDir.finish` / :func:`interrupted_status`.
* Resuming at step ``k`` drops the metrics lines after ``k`` (:meth:`RunDir.rewind`): they
  came from steps whose checkpoint was never written and are trained again, so no step is
  counted twice.
* ``run.json`` written before this contract (no ``schema_version``) is read as schema 0 (a
  language run: only ``LocalStore`` wrote one); a newer schema than this code knows is
  refused with a message saying to upgrade.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

import langmarl.store.kinds as kinds
from langmarl.core.errors import ConfigError, RunFileError, RunLockedError
from langmarl.core.files import append_jsonl, atomic_write_text, load_json_file, read_jsonl
from langmarl.core.processes import process_alive, process_start
from langmarl.core.secrets import Redactor, environment_secrets
from langmarl.core.signals import CANCELLED_ERROR, termination_requested
from langmarl.core.version import code_version
from langmarl.store.lock import RunLock

if TYPE_CHECKING:
    from langmarl.tracking.export import MetricsFollower

SCHEMA_VERSION = 1
"""Version of the layout above; bumped when a reader of the old one would misread it."""
RUN_FILE = "run.json"
METRICS_FILE = "metrics.jsonl"
EVENTS_FILE = "logs/events.jsonl"

RunStatus = Literal["running", "completed", "failed", "stopped", "cancelled"]
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)


def interrupted_status(status: RunStatus, error: str | None = None) -> tuple[RunStatus, str | None]:
    """``(status, error)``, except that ``stopped`` becomes ``cancelled`` in a process
    that received SIGTERM (whichever handler caught the interrupt)."""
    if status == "stopped" and termination_requested():
        return "cancelled", CANCELLED_ERROR
    return status, error


class RunRecord(BaseModel):
    """What ``run.json`` holds (kinds add their own fields, kept as extras)."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = 0
    """Layout version (0: written before the run contract)."""
    run_id: str
    """The run directory's name."""
    kind: str
    """Which trainer wrote the run: a registered kind (:mod:`langmarl.store.kinds`; an older
    name is read as the kind's own, a kind this process has not registered as written)."""
    status: RunStatus = "running"
    """As recorded; see :meth:`RunDir.record` for the status made true."""
    error: str | None = None
    """Why the run failed or stopped."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The run's config, secrets scrubbed (language runs keep theirs in ``config.json``)."""
    created_at: float = 0.0
    updated_at: float = 0.0
    code: dict[str, str | None] = Field(default_factory=dict)
    """``{"langmarl": version, "git_commit": sha or None}`` of the newest attempt."""
    pid: int | None = None
    """The process training the run (newest attempt)."""
    pid_started: str | None = None
    """That process's start time (``/proc``), so a recycled pid is not taken for the run."""
    attempts: int = 0
    """How many times the run was started (1 + resumes)."""

    @field_validator("kind")
    @classmethod
    def _one_name(cls, kind: str) -> str:
        spec = kinds.find(kind)
        return spec.name if spec is not None else kind


def true_status(info: dict[str, Any], resume_hint: str) -> dict[str, Any]:
    """``info`` (a ``run.json`` mapping) with a dead ``running`` run made ``failed``."""
    pid = info.get("pid")
    if (
        info.get("status") == "running"
        and pid
        and not process_alive(int(pid), info.get("pid_started"))
    ):
        info = dict(info, status="failed")
        info["error"] = info.get("error") or (
            f"process {pid} ended without finishing the run; {resume_hint}"
        )
    return info


def check_schema(path: Path, info: Any) -> dict[str, Any]:
    """``info`` if it is a ``run.json`` this code can read.

    Raises:
        RunFileError: if it is not a JSON object, or written by a newer langmarl.
    """
    if not isinstance(info, dict):
        raise RunFileError(path, "not a JSON object", "Restore or delete it.")
    version = info.get("schema_version", 0)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise RunFileError(
            path,
            f"schema_version {version!r} is newer than this langmarl reads ({SCHEMA_VERSION})",
            "Upgrade langmarl (pip install -U langmarl) to read this run.",
        )
    return info


class RunDir:
    """One run directory under the run contract.

    Args:
        path: The run directory (created on :meth:`start`).
        redact: Scrubs secrets from everything written (default: the environment's secrets).
        resume_hint: What the error of a killed run tells the user to do (default: the
            kind's, :attr:`~langmarl.store.kinds.RunKindSpec.resume_hint`).
    """

    def __init__(
        self,
        path: str | Path,
        redact: Redactor | None = None,
        resume_hint: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.redact = redact if redact is not None else Redactor(environment_secrets())
        self.resume_hint = resume_hint
        self._follower: MetricsFollower | None = None

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def run_id(self) -> str:
        return self.path.resolve().name

    def file(self, relpath: str) -> Path:
        return self.path / relpath

    def exists(self) -> bool:
        """Whether the directory holds a ``run.json``."""
        return self.file(RUN_FILE).is_file()

    def lock(self) -> RunLock:
        """The run's lock (not yet taken)."""
        return RunLock(self.path)

    # -- writing ----------------------------------------------------------------------------
    def write_text(self, relpath: str, text: str) -> Path:
        """Write ``text`` to ``relpath`` atomically, secrets scrubbed."""
        path = self.file(relpath)
        atomic_write_text(path, self.redact(text))
        return path

    def write_json(self, relpath: str, data: Any) -> Path:
        """Write ``data`` as indented JSON to ``relpath`` atomically, secrets scrubbed."""
        path = self.file(relpath)
        atomic_write_text(path, self.redact.dumps(data))
        return path

    def append(self, relpath: str, record: dict[str, Any]) -> None:
        """Append one JSON line (secrets scrubbed, fsynced)."""
        import json

        clean = json.loads(self.redact(json.dumps(record, ensure_ascii=False, default=str)))
        append_jsonl(self.file(relpath), clean)
        if relpath == METRICS_FILE and self._follower is not None:
            self._follower.send(clean)

    # -- run.json ---------------------------------------------------------------------------
    def read(self) -> dict[str, Any] | None:
        """``run.json`` as written (``None`` if absent).

        Raises:
            RunFileError: if it is corrupt or from a newer langmarl.
        """
        path = self.file(RUN_FILE)
        if not path.is_file():
            return None
        fix = f"Delete {RUN_FILE}: it is written again when the run resumes."
        return check_schema(path, load_json_file(path, fix))

    def record(self) -> RunRecord:
        """``run.json`` with its status made true (a dead ``running`` run is ``failed``).

        Raises:
            ConfigError: if the directory holds no run.
        """
        info = self.read()
        if info is None:
            raise ConfigError(f"{self.path} holds no {RUN_FILE}: it is not a langmarl run")
        if "kind" not in info:  # schema 0: only language runs (LocalStore) wrote run.json
            parl = self.file("parl_curves.json").is_file()
            info["kind"] = "parl_language" if parl else "language"
        info.setdefault("run_id", self.run_id)
        hint = self.resume_hint or kinds.resume_hint(info["kind"], self.path)
        return RunRecord.model_validate(true_status(info, hint))

    def start(self, kind: str, config: dict[str, Any] | None = None, **fields: Any) -> dict:
        """Create or resume the run: status ``running``, this process as its owner, the code
        version of this attempt (temp files a killed writer left are removed first).

        Raises:
            ConfigError: if ``kind`` is not a registered kind (:mod:`langmarl.store.kinds`).
        """
        kind = kinds.get(kind).name
        for leftover in self.path.rglob(".*.tmp") if self.path.is_dir() else []:
            if leftover.is_dir():  # a checkpoint staged but never renamed into place
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
        now = time.time()
        info = self.read() or {}
        info.setdefault("run_id", self.run_id)
        info.setdefault("created_at", now)
        if config is not None:
            info["config"] = config
        pid = os.getpid()
        info.update(fields)
        info.update(
            schema_version=SCHEMA_VERSION, kind=kind, status="running", error=None,
            pid=pid, pid_started=process_start(pid), code=code_version(), updated_at=now,
            attempts=int(info.get("attempts", 0)) + 1,
        )  # fmt: skip
        self.write_json(RUN_FILE, info)
        self.event("run_start", attempt=info["attempts"], kind=kind)
        return info

    def update(self, **fields: Any) -> dict[str, Any]:
        """Merge ``fields`` into ``run.json`` (a ``stopped`` status after SIGTERM is
        ``cancelled``: :func:`interrupted_status`)."""
        if fields.get("status") == "stopped":
            fields["status"], fields["error"] = interrupted_status("stopped", fields.get("error"))
        info = self.read() or {"run_id": self.run_id}
        info.update(fields, updated_at=time.time())
        self.write_json(RUN_FILE, info)
        return info

    def finish(self, status: RunStatus, error: str | None = None) -> None:
        """Record the run's final status (and an event saying so); ``stopped`` is recorded
        as ``cancelled`` after SIGTERM (:func:`interrupted_status`).

        The event is written first: a reader that sees the final status then finds every
        line, ``run_end`` included (the dashboard's stream ends once the status is final and
        once missed the event written after it)."""
        status, error = interrupted_status(status, error)
        self.event("run_end", status=status, error=error)
        self.update(status=status, error=error)

    def end_cancelled(self, error: str) -> bool:
        """Record as ``cancelled`` (with ``error`` and a ``run_end`` event) a run whose
        process ended while ``run.json`` still said ``running``, for a caller that knows a
        cancel was asked for (the job layer). A run whose process lives, that another
        process holds the lock of, or that recorded how it ended, is left alone; a kind that
        keeps its own status as ``outcome`` (Prompt2Policy) gets ``cancelled`` there too.
        Returns whether the run was recorded ``cancelled``.

        Raises:
            RunFileError: if ``run.json`` is corrupt or from a newer langmarl.
            StorageError: if the lock or ``run.json`` cannot be written.
        """
        if not self.exists():
            return False
        try:
            with self.lock():  # no new attempt can start (and write run.json) meanwhile
                info = self.read() or {}
                pid = info.get("pid")
                if info.get("status") != "running" or not pid:
                    return False
                if process_alive(int(pid), info.get("pid_started")):
                    return False
                fields = {"status": "cancelled", "error": error}
                if info.get("outcome") in ("pending", "running"):  # a session's own status
                    fields["outcome"] = "cancelled"
                self.event("run_end", status="cancelled", error=error)  # first: see finish
                self.update(**fields)
        except RunLockedError:
            return False
        return True

    @contextlib.contextmanager
    def tracking(self) -> Iterator[None]:
        """Record the outcome of the block: ``completed``; ``stopped`` on Ctrl-C,
        ``cancelled`` on SIGTERM (the interrupt propagates); ``failed`` with the error on
        any other exception."""
        try:
            yield
        except KeyboardInterrupt:
            self.finish("stopped", "interrupted")
            raise
        except BaseException as exc:
            self.finish("failed", f"{type(exc).__name__}: {exc}")
            raise
        self.finish("completed")

    @contextlib.contextmanager
    def reporting(
        self, report_to: str | list[str] | None, config: dict[str, Any] | None = None
    ) -> Iterator[None]:
        """While inside, every line appended to ``metrics.jsonl`` also goes to the trackers
        ``report_to`` names (:mod:`langmarl.tracking`); they are closed at the end.

        Raises:
            ConfigError, MissingDependencyError: for an invalid or missing tracker, before
                the block runs.
        """
        from langmarl.tracking.export import reporting

        with reporting(report_to, self.path, self.run_id, config) as follower:
            self._follower = follower
            try:
                yield
            finally:
                self._follower = None

    # -- streams ----------------------------------------------------------------------------
    def log_metrics(self, step: int, **series: Any) -> None:
        """Append ``{"step": step, **series}`` to ``metrics.jsonl``."""
        self.append(METRICS_FILE, {"step": step, **series})

    def metrics(self) -> list[dict[str, Any]]:
        """Every metrics line, in order (a torn last line skipped)."""
        return [m for m in read_jsonl(self.file(METRICS_FILE)) if isinstance(m, dict)]

    def event(self, name: str, **fields: Any) -> None:
        """Append ``{"time": now, "event": name, **fields}`` to ``logs/events.jsonl``."""
        self.append(EVENTS_FILE, {"time": time.time(), "event": name, **fields})

    def events(self) -> list[dict[str, Any]]:
        return [e for e in read_jsonl(self.file(EVENTS_FILE)) if isinstance(e, dict)]

    def rewind(self, step: int, relpath: str = METRICS_FILE) -> int:
        """Drop the lines of ``relpath`` whose ``step`` is after ``step`` (the run resumes
        from the checkpoint of ``step``); returns how many were dropped."""
        path = self.file(relpath)
        rows = read_jsonl(path)
        kept = [r for r in rows if not (isinstance(r, dict) and int(r.get("step", 0)) > step)]
        if len(kept) != len(rows) or (path.is_file() and not _ends_clean(path)):
            import json

            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept)
            atomic_write_text(path, text)
        return len(rows) - len(kept)


def _ends_clean(path: Path) -> bool:
    data = path.read_bytes()
    return not data or data.endswith(b"\n")
