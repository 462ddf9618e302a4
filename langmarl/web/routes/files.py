"""A run's files: a directory as a JSON listing, a file as itself (videos, reward code,
checkpoints' JSON), through :func:`langmarl.web.runfiles.safe_file`.

Every writer scrubs secrets before a file reaches disk; as a second guard, text files (by
suffix, up to :data:`MAX_SCRUBBED_BYTES`) pass the environment's redactor again on the way
out, so a secret that reached a file some other way (a tool's own log) is not served either.

A run's files are untrusted (confined PPO code writes into its run directory), so none may
run script on the dashboard's origin: only the types in :data:`INLINE_TYPES` (video, images,
JSON, plain text) are served inline; anything else (HTML, SVG, XML, unknown) is an
``application/octet-stream`` attachment; and every answer carries ``nosniff`` and a CSP
``sandbox`` (a file opened directly runs no script and has no origin).
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
INLINE_TYPES = frozenset(
    {"video/mp4", "video/webm", "image/png", "image/jpeg", "image/gif", "application/json",
     "text/plain", "text/csv", "text/markdown"}
)  # fmt: skip
"""Media types a run's file is served inline as; no browser runs script in them."""
UNTRUSTED = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"}
"""Headers on every run file: the type is not sniffed, and a file opened directly is
sandboxed (no script, an opaque origin)."""


def _media(target: Path) -> str:
    media = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if media not in INLINE_TYPES and target.suffix in TEXT_SUFFIXES:
        return "text/plain"  # .py, .log, .yaml, .jsonl: shown as text
    return media


def _text(board: Dashboard, target: Path) -> Response:
    text = board.redact(target.read_text(encoding="utf-8", errors="replace"))
    return Response(text, media_type=_media(target), headers=UNTRUSTED)


def _serve(run_id: str, path: str, board: Dashboard) -> Response | dict[str, Any]:
    entry = board.run(run_id)
    target = safe_file(board.root, entry.path, path)
    if target.is_dir():
        return {"run_id": run_id, "path": path, "entries": listing(target)}
    if target.suffix in TEXT_SUFFIXES and target.stat().st_size <= MAX_SCRUBBED_BYTES:
        return _text(board, target)
    media = _media(target)
    if media in INLINE_TYPES:
        return FileResponse(target, media_type=media, filename=target.name,
                            content_disposition_type="inline", headers=UNTRUSTED)  # fmt: skip
    return FileResponse(target, media_type="application/octet-stream", filename=target.name,
                        content_disposition_type="attachment", headers=UNTRUSTED)  # fmt: skip


@router.get("/runs/{run_id}/files", response_model=None)
def run_root_files(run_id: str, board: DashboardDep) -> Response | dict[str, Any]:
    """The run directory's listing."""
    return _serve(run_id, "", board)


@router.get("/runs/{run_id}/files/{path:path}", response_model=None)
def run_file(run_id: str, path: str, board: DashboardDep) -> Response | dict[str, Any]:
    """A file of the run (a directory: its listing). Refuses ``..``, absolute paths, hidden
    files (locks, temp files) and symlinks leading out of the run."""
    return _serve(run_id, path, board)
