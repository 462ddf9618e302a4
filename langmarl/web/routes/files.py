"""A run's files: a directory as a JSON listing, a file as itself (videos, reward code,
checkpoints' JSON), through :func:`langmarl.web.runfiles.safe_file`.

Every writer scrubs secrets before a file reaches disk; as a second guard, text files (by
suffix, up to :data:`MAX_SCRUBBED_BYTES`) pass the environment's redactor again on the way
out, so a secret that reached a file some other way (a tool's own log) is not served either.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse, Response

from langmarl.web.runfiles import listing, safe_file
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["files"])

TEXT_SUFFIXES = {".json", ".jsonl", ".txt", ".log", ".py", ".md", ".yaml", ".yml", ".csv"}
MAX_SCRUBBED_BYTES = 32 * 1024 * 1024
"""Larger text files are streamed as they are (still scrubbed when written)."""


def _text(board: Dashboard, target: Path) -> Response:
    text = board.redact(target.read_text(encoding="utf-8", errors="replace"))
    media = mimetypes.guess_type(target.name)[0] or "text/plain"
    return Response(text, media_type=media if media != "text/x-python" else "text/plain")


def _serve(run_id: str, path: str, board: Dashboard) -> Response | dict[str, Any]:
    entry = board.run(run_id)
    target = safe_file(board.root, entry.path, path)
    if target.is_dir():
        return {"run_id": run_id, "path": path, "entries": listing(target)}
    if target.suffix in TEXT_SUFFIXES and target.stat().st_size <= MAX_SCRUBBED_BYTES:
        return _text(board, target)
    return FileResponse(target, filename=target.name, content_disposition_type="inline")


@router.get("/runs/{run_id}/files", response_model=None)
def run_root_files(run_id: str, board: DashboardDep) -> Response | dict[str, Any]:
    """The run directory's listing."""
    return _serve(run_id, "", board)


@router.get("/runs/{run_id}/files/{path:path}", response_model=None)
def run_file(run_id: str, path: str, board: DashboardDep) -> Response | dict[str, Any]:
    """A file of the run (a directory: its listing). Refuses ``..``, absolute paths, hidden
    files (locks, temp files) and symlinks leading out of the run."""
    return _serve(run_id, path, board)
