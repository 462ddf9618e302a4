"""Runs of every kind: the list (filters, sort, pages), one run, its metrics and events, its
metadata, and soft delete.

``GET /api/runs/{id}/metrics`` answers columns (``steps`` and one list per key, ``None``
where a line lacks the key), which is what a chart plots; ``?since=N`` returns only the
lines after step ``N``, so a page polling a live run fetches only what is new.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query

from langmarl.core.validation import did_you_mean
from langmarl.store import kinds
from langmarl.store.catalog import LISTED_STATUSES, describe
from langmarl.store.run import RUN_FILE, RunDir
from langmarl.web.errors import ApiError
from langmarl.web.index import RunEntry
from langmarl.web.metadata import MetadataPatch, RunMetadata, update_metadata
from langmarl.web.phase import current_phase
from langmarl.web.state import DashboardDep

router = APIRouter(tags=["runs"])

Sort = Literal["updated", "-updated", "score", "-score", "run_id", "-run_id", "steps", "-steps"]
SORT_KEYS = {
    "updated": lambda e: e.summary.updated_at,
    "score": lambda e: (e.summary.score is not None, e.summary.score or 0.0),
    "run_id": lambda e: e.run_id,
    "steps": lambda e: e.steps,
}


def _check_choice(name: str, value: str | None, known: tuple[str, ...]) -> None:
    if value is not None and value not in known:
        raise ApiError(
            400, f"unknown {name} {value!r}.{did_you_mean(value, known)}",
            f"choose {name} from {', '.join(known)}",
        )  # fmt: skip


def _matches(entry: RunEntry, text: str) -> bool:
    haystack = [entry.run_id, entry.summary.kind, entry.metadata.alias or "",
                *entry.metadata.tags]  # fmt: skip
    return any(text.lower() in item.lower() for item in haystack)


@router.get("/kinds")
def list_kinds() -> list[dict[str, Any]]:
    """Every registered kind of run and what the pages need of it: its view, unit, score
    key and label, whether it can be started as a job (:mod:`langmarl.store.kinds`)."""
    return [spec.public() for spec in kinds.all_kinds()]


@router.get("/runs")
def list_runs(
    board: DashboardDep,
    kind: str | None = None,
    status: str | None = None,
    tag: str | None = None,
    starred: bool | None = None,
    text: str | None = Query(None, description="Substring of the id, kind, alias or a tag."),
    sort: Sort = Query("-updated", description="Key, '-' first for descending."),
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0),
) -> dict[str, Any]:
    """Every run under the runs directory with status, kind, steps, latest score and a
    sparkline of its score series."""
    if kind is not None and kinds.find(kind) is not None:
        kind = kinds.get(kind).name  # an older name of the kind lists its runs too
    _check_choice("kind", kind, kinds.names())
    _check_choice("status", status, LISTED_STATUSES)
    runs = [
        e for e in board.index.entries()
        if (kind is None or e.summary.kind == kind)
        and (status is None or e.summary.status == status)
        and (tag is None or tag in e.metadata.tags)
        and (starred is None or e.metadata.starred == starred)
        and (not text or _matches(e, text))
    ]  # fmt: skip
    runs.sort(key=SORT_KEYS[sort.lstrip("-")], reverse=sort.startswith("-"))
    page = runs[offset : offset + limit]
    return {"total": len(runs), "offset": offset, "runs": [e.as_dict() for e in page]}


@router.get("/runs/{run_id}")
def run_detail(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """One run: its listing, ``run.json`` (the record), its config with secrets scrubbed,
    what its kind has to show (``langmarl runs show``) and, for a language run that runs,
    its current ``phase`` (:mod:`langmarl.web.phase`; otherwise ``None``)."""
    entry = board.run(run_id)
    listing = entry.as_dict()
    if entry.summary.status == "unreadable":
        return {"run": listing, "record": None, "config": None, "summary": {}, "phase": None}
    record: dict[str, Any] | None = None
    if (entry.path / RUN_FILE).is_file():
        record = RunDir(entry.path).record().model_dump()
    config = (record or {}).get("config") or {}
    details = describe(entry.path).details
    language = listing["view"] == "language"
    return {
        "run": listing,
        "record": board.scrub({k: v for k, v in (record or {}).items() if k != "config"}),
        "config": board.scrub(config),
        "summary": board.scrub(details),
        "phase": current_phase(entry.path, entry.summary.status, config) if language else None,
    }


def _columns(rows: list[dict[str, Any]], keys: list[str]) -> dict[str, list[Any]]:
    return {key: [row.get(key) for row in rows] for key in keys}


@router.get("/runs/{run_id}/metrics")
def run_metrics(
    run_id: str,
    board: DashboardDep,
    keys: str | None = Query(None, description="Comma-separated keys (default: all)."),
    since: int | None = Query(None, description="Only lines after this step."),
) -> dict[str, Any]:
    """The run's ``metrics.jsonl`` as columns: ``steps`` and ``series[key]``."""
    entry = board.run(run_id)
    rows = RunDir(entry.path).metrics()
    available = list(dict.fromkeys(k for row in rows for k in row if k != "step"))
    wanted = [k.strip() for k in keys.split(",") if k.strip()] if keys else available
    for key in wanted:
        if key not in available:
            raise ApiError(
                400, f"run {run_id!r} has no metric {key!r}.{did_you_mean(key, available)}",
                f"choose keys from {', '.join(available) or '(none recorded yet)'}",
            )  # fmt: skip
    if since is not None:
        rows = [r for r in rows if isinstance(r.get("step"), int) and r["step"] > since]
    last = rows[-1].get("step") if rows else since
    return {
        "run_id": run_id, "keys": available, "steps": [r.get("step") for r in rows],
        "series": _columns(rows, wanted), "last_step": last,
    }  # fmt: skip


@router.get("/runs/{run_id}/events")
def run_events(
    run_id: str,
    board: DashboardDep,
    since: int = Query(0, ge=0, description="First event number to return."),
    event: str | None = Query(None, description="Only events of this name."),
    limit: int = Query(500, ge=1, le=5000),
    last: bool = Query(False, description="The newest `limit` events instead of the first."),
) -> dict[str, Any]:
    """The run's ``logs/events.jsonl``, numbered (``seq``) so a client can ask for more;
    ``?last=true`` answers the newest (what a page following a long run shows)."""
    entry = board.run(run_id)
    events = RunDir(entry.path).events()
    numbered = [{"seq": i, **e} for i, e in enumerate(events) if i >= since]
    if event is not None:
        numbered = [e for e in numbered if e.get("event") == event]
    page = numbered[-limit:] if last else numbered[:limit]
    following = page[-1]["seq"] + 1 if page else len(events)
    return {"run_id": run_id, "events": board.scrub(page), "next": following}


@router.get("/runs/{run_id}/events/{seq}")
def run_event(run_id: str, seq: int, board: DashboardDep) -> dict[str, Any]:
    """One event of ``logs/events.jsonl`` in full, by its ``seq`` (its line number from 0,
    as ``/events`` numbers them): a loop step with everything it recorded."""
    entry = board.run(run_id)
    events = RunDir(entry.path).events()
    if not 0 <= seq < len(events):
        raise ApiError(
            404, f"run {run_id!r} has no event {seq}",
            f"choose seq from 0 to {len(events) - 1}" if events else "it has no events yet",
        )  # fmt: skip
    return {"run_id": run_id, "event": board.scrub({"seq": seq, **events[seq]})}


@router.patch("/runs/{run_id}/metadata")
def patch_metadata(run_id: str, patch: MetadataPatch, board: DashboardDep) -> RunMetadata:
    """Set the run's alias, star or tags (only the fields sent change)."""
    entry = board.run(run_id)
    return update_metadata(entry.path, patch)


@router.delete("/runs/{run_id}")
def delete_run(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """Move the run to the trash (409 while its process runs)."""
    return board.trash.delete(board.run(run_id))
