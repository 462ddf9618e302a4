"""Prompt2Policy sessions (run kind ``p2p``) started and stopped over the API, as the
reference system's ``POST /api/sessions`` and ``POST /api/sessions/{id}/stop``.

Starting one submits a ``p2p`` job on the dashboard's jobs backend (the same checks as
``POST /api/jobs``: the config validated as ``langmarl p2p run`` would, before anything
runs, 422 naming the field; no file outside the server's directories). Its session id is
the job id, its run ``<runs dir>/<id>``; it is read like any session
(``GET /api/runs/{id}/iterations``). Its models are the config's ``llm`` and ``vlm`` (a
preset, an LLM config file or mapping, never an inline key; default: the embedded model).

Stopping ends it as ``langmarl jobs cancel`` does, with SIGTERM: the session unwinds, keeps
its judged iterations and records itself ``cancelled`` (resumable with ``langmarl p2p
resume``). A session this dashboard's backend runs is cancelled through its job; one
started elsewhere (``langmarl p2p run`` in a terminal) is signalled directly, found from its
``run.json`` (``pid`` and that process's start time) and only while that process holds the
run's lock, so a recycled pid or a stale record is never signalled. A session that is not
running is refused (409): nothing is signalled.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from langmarl.core.errors import LangmarlError
from langmarl.core.processes import process_alive
from langmarl.jobs import JobRecord, JobSpec, Resources
from langmarl.store.lock import LOCK_FILE
from langmarl.store.run import RUN_FILE, RunDir, RunRecord
from langmarl.web.errors import ApiError
from langmarl.web.routes import jobs
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["sessions"])

KIND = "p2p"
UNFINISHED = ("queued", "running")


class SessionRequest(BaseModel):
    """A session to start: the intent, its settings, the job's resources."""

    model_config = ConfigDict(extra="forbid")

    intent: str = Field(min_length=1)
    """The behaviour wanted, in words (``"make the cheetah run backwards"``)."""
    config: dict[str, Any] = Field(default_factory=dict)
    """The session's settings, as a session config file holds them (``env_id``,
    ``max_iterations``, ``total_timesteps``, ``train``…; ``GET /api/envs`` lists the envs)."""
    seed: int | None = None
    """The session's seed (None: the config's)."""
    resources: Resources = Field(default_factory=Resources)
    """Cores (and a memory hint) of the session's job."""
    name: str | None = None
    """A label the session's id starts with (default: ``session``)."""


def _view(board: Dashboard, record: JobRecord) -> dict[str, Any]:
    """The job as a session: its id, run directory, state."""
    job = jobs._view(board, record)
    return {"session_id": job["run_id"], "job_id": record.job_id, "run_dir": record.run_dir,
            "state": record.state, "stop_requested": record.cancel_requested}  # fmt: skip


@router.post("/sessions", status_code=201)
def start(request: SessionRequest, board: DashboardDep) -> dict[str, Any]:
    """Start a session as a ``p2p`` job; it runs as soon as its cores are free. Answers its
    ``session_id`` (its run id from now on: ``GET /api/runs/{session_id}``), ``job_id``
    and ``run_dir``."""
    spec = JobSpec(kind=KIND, intent=request.intent, config=request.config,
                   seed=request.seed, resources=request.resources,
                   name=request.name or "session")  # fmt: skip
    job = jobs.submit(spec, board)
    return _view(board, jobs._backend(board).status(job["job_id"]))


def _session(board: Dashboard, session_id: str) -> tuple[Path, RunRecord | None]:
    """The session's directory and record (None before its job started it).

    Raises:
        ApiError: 404 when ``session_id`` names neither a session nor a session's job.
    """
    path = board.index.path_of(session_id)  # refuses ids leaving the runs directory
    if not (path / RUN_FILE).is_file():
        if _job_of(board, path) is None:
            raise ApiError(404, f"no session {session_id!r}", "GET /api/runs lists the runs")
        return path, None
    try:
        record = RunDir(path).record()
    except LangmarlError as exc:
        raise ApiError(409, f"session {session_id!r} cannot be read: {exc}",
                       "fix or delete its run.json") from None  # fmt: skip
    if record.kind != KIND:
        raise ApiError(404, f"run {session_id!r} is a {record.kind} run, not a session",
                       "stop a job with POST /api/jobs/{id}/cancel")  # fmt: skip
    return path, record


def _job_of(board: Dashboard, path: Path) -> JobRecord | None:
    """The job of this dashboard's backend whose run is ``path`` (None without one)."""
    if board.backend is None:
        return None
    target = path.resolve()
    found = [r for r in board.backend.list() if Path(r.run_dir).resolve() == target]
    return found[0] if found else None


def _lock_holder(path: Path) -> int | None:
    """The pid a held run lock names (None when the lock is free or names none)."""
    lock = path / LOCK_FILE
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: the holder wrote its pid
            text = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip()
            return int(text) if text.isdigit() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _signal_session(session_id: str, path: Path, record: RunRecord) -> int:
    """SIGTERM the process that runs the session (checks in the module docstring); its pid.

    Raises:
        ApiError: 409 when the process cannot be told apart from another one.
    """
    pid, started = record.pid, record.pid_started
    if pid is None or started is None or not process_alive(pid, started):
        raise ApiError(409, f"session {session_id!r} is not running (no live process)",
                       "nothing to stop; `langmarl p2p resume` continues it")  # fmt: skip
    if _lock_holder(path) != pid:
        raise ApiError(
            409, f"session {session_id!r}: process {pid} does not hold the run's lock",
            f"stop it where it runs (Ctrl-C in its terminal, or `kill -TERM {pid}`)",
        )  # fmt: skip
    with contextlib.suppress(ProcessLookupError):  # ended meanwhile: nothing left to stop
        os.kill(pid, signal.SIGTERM)
    return pid


@router.post("/sessions/{session_id}/stop")
def stop(session_id: str, board: DashboardDep) -> dict[str, Any]:
    """Stop a running session (its job's or a terminal's) with SIGTERM; returns at once.
    It ends ``cancelled``, its judged iterations kept. 409 if it is not running."""
    path, record = _session(board, session_id)
    job = _job_of(board, path)
    if job is not None and job.state in UNFINISHED:
        cancelled = jobs._backend(board).cancel(job.job_id)
        return {**_view(board, cancelled), "status": "stopping", "via": "job", "pid": None}
    if record is None or record.status != "running":
        status = record.status if record is not None else (job.state if job else "unknown")
        raise ApiError(409, f"session {session_id!r} is not running (it is {status})",
                       "nothing to stop; GET /api/runs/{id} shows how it ended")  # fmt: skip
    pid = _signal_session(session_id, path, record)
    return {"session_id": session_id, "job_id": None, "run_dir": str(path),
            "state": "running", "stop_requested": True, "status": "stopping",
            "via": "signal", "pid": pid}  # fmt: skip
