"""Jobs: start a training command as a job, follow it, stop it, read its output — over the
:class:`langmarl.jobs.Backend` the app was created with.

The config travels in the request as a mapping, validated by the command's own config class
before anything runs (422 naming the field and the fix); a config *file name* is refused, and
so is a value inside the config that names an existing file outside the server's working
directory and runs directory (``"llm": "/etc/passwd"``), so a client cannot make the server
read its files. A job's run lands in ``<runs dir>/<job id>`` and
shows in ``GET /api/runs`` like any other; cancelling stops it gracefully (its run ends
``cancelled``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query

from langmarl.core.errors import ConfigError
from langmarl.jobs import Backend, JobRecord, JobSpec
from langmarl.jobs.environment import api_job_problems, key_variables
from langmarl.web.errors import ApiError
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["jobs"])


def _backend(board: Dashboard) -> Backend:
    if board.backend is None:
        raise ApiError(
            503, "this dashboard runs no jobs backend",
            "start it with `langmarl dashboard` (local jobs by default) or pass backend= to "
            "create_app",
        )  # fmt: skip
    return board.backend


def _record(board: Dashboard, job_id: str) -> JobRecord:
    try:
        return _backend(board).status(job_id)
    except ConfigError as exc:
        raise ApiError(404, f"no job {job_id!r}", "GET /api/jobs lists the jobs") from exc


def _view(board: Dashboard, record: JobRecord) -> dict[str, Any]:
    """The record (secrets scrubbed) and the id of its run in ``GET /api/runs``."""
    data = board.scrub(record.model_dump(mode="json"))
    run_dir, root = Path(record.run_dir).resolve(), board.root.resolve()
    data["run_id"] = board.index.run_id(run_dir, root) if run_dir.is_relative_to(root) else None
    return dict(data)


@router.post("/jobs", status_code=201)
def submit(spec: JobSpec, board: DashboardDep) -> dict[str, Any]:
    """Validate and queue a job; it starts as soon as its cores are free."""
    if isinstance(spec.config, str):
        raise ApiError(
            422, "invalid body field 'config': a file name is not accepted over the API",
            "send the config itself as a JSON object (e.g. the file's contents)",
        )  # fmt: skip
    _refuse_outside_files(spec.config, board.root)
    _refuse_outside_files(spec.overrides, board.root, "overrides")  # applied to the config
    asked = {"config": spec.config, "overrides": spec.overrides}
    for field, fix in api_job_problems(spec.env, asked):
        raise ApiError(422, f"invalid body field {field!r}: not allowed for jobs sent over "
                       "the API", fix)  # fmt: skip
    named = {name for where, part in asked.items() for name in key_variables(part, where)}
    spec = spec.model_copy(update={"env": sorted(set(spec.env) | named)})
    backend = _backend(board)
    try:
        job_id = backend.submit(spec)
    except ConfigError as exc:
        raise ApiError(422, f"invalid job: {exc}", "fix the field the message names") from None
    return _view(board, backend.status(job_id))


def _refuse_outside_files(config: Any, runs_dir: Path, where: str = "config") -> None:
    """ApiError 422 for a string in ``config`` naming an existing file or directory outside
    the working directory and ``runs_dir`` (absolute, ``~`` or ``..``)."""
    if isinstance(config, dict):
        for key, value in config.items():
            _refuse_outside_files(value, runs_dir, f"{where}.{key}")
    elif isinstance(config, list):
        for index, value in enumerate(config):
            _refuse_outside_files(value, runs_dir, f"{where}[{index}]")
    elif isinstance(config, str) and ("/" in config or config.startswith("~")):
        target = Path(config).expanduser()
        try:
            found = target.exists()
            resolved = target.resolve()
        except (OSError, ValueError):
            return
        inside = any(resolved.is_relative_to(r.resolve()) for r in (Path.cwd(), runs_dir))
        if found and not inside:
            raise ApiError(
                422, f"invalid body field {where!r}: it names a file outside the server's "
                "working directory and runs directory",
                "send what the file holds (e.g. an llm preset name or the config itself), or "
                "a path inside the dashboard's working directory",
            )  # fmt: skip


@router.get("/jobs")
def list_jobs(board: DashboardDep) -> list[dict[str, Any]]:
    """Every job of the runs directory, newest first, with its true state."""
    return [_view(board, record) for record in _backend(board).list()]


@router.get("/jobs/{job_id}")
def job(job_id: str, board: DashboardDep) -> dict[str, Any]:
    """One job: state (queued, running, completed, failed, cancelled), exit code, error."""
    return _view(board, _record(board, job_id))


@router.post("/jobs/{job_id}/cancel")
def cancel(job_id: str, board: DashboardDep) -> dict[str, Any]:
    """Stop the job gracefully (SIGTERM, its run ends ``cancelled``); returns at once."""
    _record(board, job_id)
    return _view(board, _backend(board).cancel(job_id))


@router.get("/jobs/{job_id}/logs")
def logs(
    job_id: str,
    board: DashboardDep,
    tail: int | None = Query(None, ge=0, description="Only the last N lines."),
) -> dict[str, Any]:
    """The job's stdout and stderr so far."""
    _record(board, job_id)
    text = _backend(board).logs(job_id, tail=tail)
    return {"job_id": job_id, "logs": board.redact(text)}
