"""``GET /api/runs/{id}/stream``: server-sent events of a run's new metrics lines and events.

Every ``poll_interval`` seconds the stream looks at the sizes of ``metrics.jsonl``,
``logs/events.jsonl`` and, for a pool-search run, ``pool.jsonl`` and
``validation_scores.jsonl`` (written while candidates are scored, when no event is), and
sends the complete lines added since (``event: metrics`` / ``event: event`` /
``event: pool`` / ``event: validation``, the line as ``data``); a file that shrank (a
resumed run rewinds its metrics) is read again from the start after an ``event: reset``.
``event: status`` says the run's status first and whenever it changes, so a page opened
before the run started (no ``run.json`` yet: ``unknown``) sees it start. It ends with
``event: end`` (the final status) once the run is neither running nor about to start, or
when the client goes. Between looks it sleeps, so an idle stream costs nothing; a comment
line every ``KEEPALIVE_SECONDS`` keeps proxies from closing it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from langmarl.core.errors import LangmarlError
from langmarl.store.local import VALIDATION_SCORES_FILE
from langmarl.store.run import EVENTS_FILE, METRICS_FILE, RUN_FILE, RunDir
from langmarl.web.pool import POOL_FILE
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["live"])

KEEPALIVE_SECONDS = 15.0
STREAMS = {
    "metrics": METRICS_FILE, "event": EVENTS_FILE, "pool": POOL_FILE,
    "validation": VALIDATION_SCORES_FILE,
}  # fmt: skip
LIVE_STATUSES = ("running", "unknown")
"""Statuses the stream stays open for: ``unknown`` is a run whose ``run.json`` is not
written yet (its trainer still loading)."""


class FileTail:
    """The complete lines appended to ``path`` since the last :meth:`read`."""

    def __init__(self, path: Path, from_start: bool) -> None:
        self.path = path
        self.offset = 0 if from_start or not path.is_file() else path.stat().st_size

    def read(self) -> tuple[bool, list[str]]:
        """``(reset, new lines)``: ``reset`` when the file shrank and is read from the start."""
        try:
            size = self.path.stat().st_size
        except OSError:
            return False, []
        reset = size < self.offset
        if reset:
            self.offset = 0
        if size == self.offset:
            return reset, []
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read(size - self.offset)
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits
        self.offset += len(complete)
        lines = complete.decode("utf-8", errors="replace").splitlines()
        return reset, [line for line in lines if line.strip()]


def _status(run: Path) -> str:
    if not (run / RUN_FILE).is_file():
        return "unknown"
    try:
        return RunDir(run).record().status
    except LangmarlError:
        return "unreadable"


def _message(event: str, data: str) -> str:
    return f"event: {event}\ndata: {data}\n\n"


async def follow(
    board: Dashboard, run: Path, request: Request, from_start: bool
) -> AsyncIterator[str]:
    """The SSE messages of ``run`` until it ends or the client goes."""
    tails = {name: FileTail(run / relpath, from_start) for name, relpath in STREAMS.items()}
    quiet_since = time.monotonic()
    said = None
    while True:
        status = _status(run)  # before reading, so lines written before the end are sent
        if status != said:
            yield _message("status", json.dumps({"status": status}))
            said = status
        for name, tail in tails.items():
            reset, lines = tail.read()
            if reset:
                yield _message("reset", json.dumps({"stream": name}))
            for line in lines:
                yield _message(name, board.redact(line))
                quiet_since = time.monotonic()
        if status not in LIVE_STATUSES:
            yield _message("end", json.dumps({"status": status}))
            return
        if time.monotonic() - quiet_since > KEEPALIVE_SECONDS:
            yield ": keepalive\n\n"
            quiet_since = time.monotonic()
        if await request.is_disconnected():
            return
        await asyncio.sleep(board.poll_interval)


@router.get("/runs/{run_id}/stream", response_class=StreamingResponse)
async def stream(
    run_id: str,
    request: Request,
    board: DashboardDep,
    replay: bool = Query(False, description="Send the lines already written first."),
) -> StreamingResponse:
    """Server-sent events: ``status`` first and on every change, ``metrics``, ``event``,
    ``pool`` and ``validation`` lines as the run writes them, ``end`` with its status when
    it stops."""
    entry = board.run(run_id)
    return StreamingResponse(
        follow(board, entry.path, request, replay),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
