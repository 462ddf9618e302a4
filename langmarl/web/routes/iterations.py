"""``GET /api/iterations``: every session's iterations in one list, newest first, paginated
and filterable, as the reference system's global iteration list.

A session is any run whose kind the dashboard shows in its reward view and reads with a
reader (:mod:`.reward`: the Prompt2Policy ``p2p`` runs, a benchmark's sessions included).
Each item is the session's own iteration summary (``_iteration_summary`` of :mod:`.reward`: the
status, judgment, return, the reward's LaTeX, the videos) with the session it belongs to.
An iteration's time is when its status was last written (else its directory's); a session
that cannot be read is left out, as the runs list shows it on its own line.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from langmarl.core.errors import LangmarlError
from langmarl.store import kinds
from langmarl.store.run import RUN_FILE
from langmarl.web.errors import ApiError
from langmarl.web.index import ID_SEPARATOR, RunEntry
from langmarl.web.routes.reward import _iteration_summary, _session
from langmarl.web.runfiles import read_json
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["reward space"])

MAX_LIMIT = 500


def _is_session(entry: RunEntry) -> bool:
    spec = kinds.find(entry.summary.kind)
    return spec is not None and spec.view == "reward" and spec.reader is not None


def _session_items(entry: RunEntry) -> list[dict[str, Any]]:
    """The session's iterations, each with its session and time (empty if unreadable)."""
    try:
        session = _session(entry)
        history = session.read_history() or {}
        metadata = session.read_metadata() or {}
        records = session.iteration_records()
        run = read_json(entry.path / RUN_FILE) or {}
    except (LangmarlError, ApiError, OSError, ValueError):
        return []
    loop = {str(it.get("iteration_id")): it for it in history.get("iterations", [])}
    items = []
    for record in records:
        status = record.read_status() or {}
        updated = status.get("updated_at") or record.path.stat().st_mtime
        items.append({
            "session_id": entry.run_id, "prompt": metadata.get("prompt"),
            "env_id": run.get("env_id"), "updated_at": updated,
            **_iteration_summary(entry.run_id, record, loop.get(record.iteration_id, {})),
        })  # fmt: skip
    return items


def _sessions(board: Dashboard, session: str | None, benchmark: str | None) -> list[RunEntry]:
    """The sessions the filters keep (a named session that is none: ApiError 404)."""
    if session is not None:
        entry = board.run(session)
        if not _is_session(entry):
            raise ApiError(404, f"run {session!r} is a {entry.summary.kind} run, not a session",
                           "GET /api/runs lists the runs and their kinds")  # fmt: skip
        return [entry]
    found = [e for e in board.index.entries() if _is_session(e)]
    if benchmark is not None:
        found = [e for e in found if e.run_id.startswith(benchmark + ID_SEPARATOR)]
    return found


@router.get("/iterations")
def iterations(
    board: DashboardDep,
    session: str | None = Query(None, description="Only this session's (its run id)."),
    benchmark: str | None = Query(None, description="Only the sessions of this benchmark."),
    status: str | None = Query(None, description="Only iterations with this status."),
    offset: int = Query(0, ge=0, description="Items to skip (of the newest-first list)."),
    limit: int = Query(50, ge=1, le=MAX_LIMIT, description="Items to answer at most."),
) -> dict[str, Any]:
    """Every session's iterations, newest first: ``total`` (after the filters) and the
    page ``iterations[offset:offset + limit]``, each with its ``session_id``, the session's
    prompt and env, status, judgment, return, reward LaTeX and videos."""
    items = [item for e in _sessions(board, session, benchmark) for item in _session_items(e)]
    if status is not None:
        items = [item for item in items if item["status"] == status]
    items.sort(key=lambda item: item["updated_at"] or 0.0, reverse=True)
    page = items[offset : offset + limit]
    return {"total": len(items), "offset": offset, "limit": limit,
            "iterations": board.scrub(page)}  # fmt: skip
