"""Benchmarks (``langmarl p2p bench``, run kind ``p2p_bench``): the list, one in full, start
one, stop it, delete it.

A benchmark is a directory holding ``bench.json`` (its plan, finished cases, summary per
group, ``complete`` and the case in progress): a run of kind ``p2p_bench``, or a table an
older ``langmarl p2p bench`` wrote without ``run.json``. Its id is its run id (``~`` joins
the parts of a nested one). Its status is its run's, made true (a ``running`` run whose
process is gone is ``failed``); ``queued`` for a job that has not started it yet; for an
older table ``completed`` or ``unknown``.

Starting one submits a ``p2p_bench`` job on the dashboard's jobs backend: its id is the job
id, and its config is checked by the kind's own validation before anything runs (422 naming
the field). Stopping cancels that job (SIGTERM: the case in progress ends its session
``cancelled``, ``bench.json`` keeps the finished cases, the benchmark ends ``cancelled``);
a benchmark started in a terminal is stopped there. Deleting moves it, sessions and all, to
the trash (``GET /api/trash``), never while it runs. The server imports no space: the
benchmark's files are read as plain JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from langmarl.core.errors import ConfigError, LangmarlError
from langmarl.jobs import JobRecord, JobSpec, Resources
from langmarl.store.catalog import RunSummary
from langmarl.store.run import RUN_FILE, RunDir, true_status
from langmarl.web.errors import ApiError
from langmarl.web.index import TRASH_DIR, RunEntry
from langmarl.web.routes.jobs import _backend, _refuse_outside_files
from langmarl.web.runfiles import read_json
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["benchmarks"])

KIND = "p2p_bench"
BENCH_FILE = "bench.json"
UNFINISHED = ("queued", "running")


class BenchRequest(BaseModel):
    """A benchmark to start: its cases, every session's settings, the LLMs, resources."""

    model_config = ConfigDict(extra="forbid")

    cases: list[dict[str, Any]] | None = None
    """The cases, each ``{env_id, instruction, category, difficulty}``."""
    cases_csv: str | None = None
    """The cases as CSV text (header ``env_id,instruction,category,difficulty``) instead."""
    session: dict[str, Any] = Field(default_factory=dict)
    """Every case's session settings (``max_iterations``, ``total_timesteps``, ``train``…);
    each case sets ``env_id``."""
    limit: int | None = Field(default=None, ge=1)
    """Run only the first N cases."""
    llm: str | dict[str, Any] | None = None
    """The sessions' LLM: a preset name or an LLM config (default: the embedded model)."""
    vlm: str | dict[str, Any] | None = None
    """A multimodal LLM for the video judge (default: none)."""
    seed: int | None = None
    """Every session's seed (default: ``session.seed``, else 1)."""
    resources: Resources = Field(default_factory=Resources)
    """Cores (and a memory hint) of the benchmark's job."""
    name: str | None = None
    """A label the benchmark's id starts with (default: ``bench``)."""


def _tables(board: Dashboard) -> dict[str, Path]:
    """Bench id → directory: every ``p2p_bench`` run and every older table, two levels
    deep at most (hidden directories, the trash among them, are skipped, and so are
    symlinks: a link may lead out of the runs directory, as the runs listing decides)."""
    found = {e.run_id: e.path for e in board.index.entries() if e.summary.kind == KIND}
    for path in sorted(board.root.glob(f"*/{BENCH_FILE}")) + sorted(
        board.root.glob(f"*/*/{BENCH_FILE}")
    ):
        parts = path.relative_to(board.root).parts
        linked = any((board.root / Path(*parts[: i + 1])).is_symlink() for i in range(len(parts)))
        if not linked and not any(part.startswith(".") for part in parts):
            found.setdefault(board.index.run_id(path.parent), path.parent)
    return found


def _jobs(board: Dashboard) -> dict[str, JobRecord]:
    """Bench id → its job, for the benchmarks this dashboard's backend runs (none without
    a backend)."""
    if board.backend is None:
        return {}
    root, jobs = board.root.resolve(), {}
    for record in board.backend.list():
        run_dir = Path(record.run_dir).resolve()
        if record.spec.kind == KIND and run_dir.is_relative_to(root) and run_dir != root:
            jobs[board.index.run_id(run_dir, root)] = record
    return jobs


def _find(board: Dashboard, bench_id: str) -> tuple[Path, JobRecord | None]:
    """The benchmark's directory and job (ApiError 404 if there is neither)."""
    path = board.index.path_of(bench_id)  # refuses ids leaving the runs directory
    job = _jobs(board).get(bench_id)
    if (path / BENCH_FILE).is_file() or _is_bench_run(path) or _job_listed(job, path):
        return path, job
    raise ApiError(404, f"no benchmark {bench_id!r}", "GET /api/benchmarks lists them")


def _is_bench_run(path: Path) -> bool:
    info = read_json(path / RUN_FILE)
    return isinstance(info, dict) and info.get("kind") == KIND


def _job_pending(job: JobRecord | None) -> bool:
    """Whether ``job`` has not started its benchmark yet, or is running it."""
    return job is not None and job.state in UNFINISHED


def _job_listed(job: JobRecord | None, path: Path) -> bool:
    """Whether ``job``'s benchmark is listed though it has no table: queued or running, or
    ended before its first case with files left (its log), so it can be seen and deleted."""
    return _job_pending(job) or (job is not None and path.is_dir())


def _status(path: Path, table: dict[str, Any], job: JobRecord | None) -> tuple[str, str | None]:
    """The benchmark's status and error (see the module docstring)."""
    if (path / RUN_FILE).is_file():
        try:
            record = RunDir(path).record()
        except LangmarlError as exc:  # listed as the runs list shows it, not a 500
            return "unreadable", str(exc)
        return record.status, record.error
    if job is not None:
        return job.state, job.error
    return ("completed" if table.get("complete") else "unknown"), None


def _summary(board: Dashboard, bench_id: str, path: Path, job: JobRecord | None) -> dict:
    """One line of the list: status, progress (cases done of the total) and the summary."""
    table = read_json(path / BENCH_FILE) or {}
    status, error = _status(path, table, job)
    done = len(table.get("cases") or [])
    total = table.get("cases_total") or (done if table.get("complete") else None)
    info = read_json(path / RUN_FILE) or {}
    updated = info.get("updated_at") or (job.submitted_at if job else None)
    if updated is None and (path / BENCH_FILE).is_file():
        updated = (path / BENCH_FILE).stat().st_mtime
    return board.scrub({
        "bench_id": bench_id, "status": status, "error": error, "cases": done,
        "cases_done": done, "cases_total": total, "complete": bool(table.get("complete")),
        "summary": (table.get("summary") or {}).get("all"), "updated_at": updated,
        "run_id": bench_id if info else None, "job_id": job and job.job_id,
        "job_state": job and job.state, "stop_requested": bool(job and job.cancel_requested),
    })  # fmt: skip


def _session_row(board: Dashboard, path: Path, row: dict[str, Any]) -> dict[str, Any]:
    """A case's row with its session's run id (to open it), and, for the case in progress,
    its session's status and progress."""
    session = path / str(row.get("session_id") or ".none")
    if not (session / RUN_FILE).is_file():
        return {**row, "run_id": None, "progress": None}
    entry = board.index.get(board.index.run_id(session))
    live = {"status": entry.summary.status} if row.get("status") is None else {}
    return {**row, **live, "run_id": entry.run_id, "progress": entry.summary.progress}


def _case_rows(board: Dashboard, path: Path, table: dict[str, Any]) -> list[dict[str, Any]]:
    """Every case: the finished ones, the one in progress (or interrupted), then those
    still to run (``pending``)."""
    rows = [{"index": i, **row} for i, row in enumerate(table.get("cases") or [], 1)]
    current = table.get("current")
    if isinstance(current, dict) and int(current.get("index") or 0) > len(rows):
        rows.append({**current, "status": None, "best_score": None})
    for index, case in enumerate(table.get("plan") or [], 1):
        if index > len(rows):
            rows.append({"index": index, "case": case, "session_id": None, "status": "pending",
                         "best_score": None})  # fmt: skip
    return [_session_row(board, path, row) for row in rows]


@router.get("/benchmarks")
def benchmarks(board: DashboardDep) -> list[dict[str, Any]]:
    """Every benchmark under the runs directory, newest first: status, progress
    (``cases_done`` of ``cases_total``), the overall summary, its job if it has one."""
    jobs = _jobs(board)
    tables = _tables(board)
    paths = {i: board.index.path_of(i) for i in jobs}
    listed = {i: p for i, p in paths.items() if _job_listed(jobs[i], p)}
    items = [_summary(board, i, p, jobs.get(i)) for i, p in {**listed, **tables}.items()]
    return sorted(items, key=lambda item: item["updated_at"] or 0.0, reverse=True)


@router.get("/benchmarks/{bench_id}")
def benchmark(bench_id: str, board: DashboardDep) -> dict[str, Any]:
    """One benchmark: its status and progress, every case (env, instruction, category,
    difficulty, session, status, best score; the session's run id to open it; the case in
    progress and those still ``pending``) and the summary per group (the list's
    ``summary`` is the ``all`` group alone)."""
    path, job = _find(board, bench_id)
    table = read_json(path / BENCH_FILE) or {}
    return {
        **_summary(board, bench_id, path, job),
        "cases": board.scrub(_case_rows(board, path, table)),
        "summary": table.get("summary") or {},
    }


@router.post("/benchmarks", status_code=201)
def start(request: BenchRequest, board: DashboardDep) -> dict[str, Any]:
    """Start a benchmark as a ``p2p_bench`` job; it runs as soon as its cores are free.
    Answers its line of the list (``bench_id``: its id from now on)."""
    config = request.model_dump(exclude={"resources", "name", "seed"}, exclude_none=True)
    _refuse_outside_files(config, board.root)
    spec = JobSpec(kind=KIND, config=config, resources=request.resources,
                   name=request.name or "bench", seed=request.seed)  # fmt: skip
    backend = _backend(board)
    try:
        job_id = backend.submit(spec)
    except ConfigError as exc:
        raise ApiError(
            422, f"invalid benchmark: {exc}", "fix the field the message names"
        ) from None
    record = backend.status(job_id)
    run_dir = Path(record.run_dir)
    return _summary(board, board.index.run_id(run_dir.resolve(), board.root.resolve()), run_dir,
                    record)  # fmt: skip


@router.post("/benchmarks/{bench_id}/stop")
def stop(bench_id: str, board: DashboardDep) -> dict[str, Any]:
    """Stop a queued or running benchmark by cancelling its job (it ends ``cancelled``,
    finished cases kept); returns at once. A finished benchmark is left as it is."""
    path, job = _find(board, bench_id)
    if job is not None and job.state in UNFINISHED:
        job = _backend(board).cancel(job.job_id)
    elif _status(path, read_json(path / BENCH_FILE) or {}, job)[0] == "running":
        pid = (read_json(path / RUN_FILE) or {}).get("pid")
        raise ApiError(
            409, f"benchmark {bench_id!r} was not started by this dashboard (no job runs it)",
            f"stop it where it runs: Ctrl-C in its terminal, or `kill -TERM {pid}`",
        )  # fmt: skip
    return _summary(board, bench_id, path, job)


@router.delete("/benchmarks/{bench_id}")
def delete(bench_id: str, board: DashboardDep) -> dict[str, Any]:
    """Move a benchmark (its sessions included) to the trash; refused (409) while it is
    queued or running."""
    path, job = _find(board, bench_id)
    status = _status(path, read_json(path / BENCH_FILE) or {}, job)[0]
    if status in UNFINISHED or _running_session(path):
        raise ApiError(
            409, f"benchmark {bench_id!r} is {status if status in UNFINISHED else 'running'}",
            f"stop it first (POST /api/benchmarks/{bench_id}/stop), then delete it",
        )  # fmt: skip
    if not path.is_dir() or TRASH_DIR in path.parts:
        raise ApiError(404, f"benchmark {bench_id!r} has no files yet", "nothing to delete")
    if (path / RUN_FILE).is_file():
        return board.trash.delete(board.run(bench_id))
    older = RunSummary(path, path.name, KIND, status, layout="old")
    return board.trash.delete(RunEntry(bench_id, older))


def _running_session(path: Path) -> bool:
    """Whether a session inside ``path`` is still running (an older table has no status
    of its own)."""
    for child in path.iterdir() if path.is_dir() else []:
        info = read_json(child / RUN_FILE)
        if isinstance(info, dict) and true_status(info, "")["status"] == "running":
            return True
    return False
