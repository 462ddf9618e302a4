"""A run's files: a directory as a JSON listing, a file as itself (videos, reward code,
checkpoints' JSON), through :func:`langmarl.web.runfiles.safe_file`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import FileResponse

from langmarl.web.runfiles import listing, safe_file
from langmarl.web.state import DashboardDep

router = APIRouter(tags=["files"])


def _serve(run_id: str, path: str, board: DashboardDep) -> FileResponse | dict[str, Any]:
    entry = board.run(run_id)
    target = safe_file(board.root, entry.path, path)
    if target.is_dir():
        return {"run_id": run_id, "path": path, "entries": listing(target)}
    return FileResponse(target, filename=target.name, content_disposition_type="inline")


@router.get("/runs/{run_id}/files", response_model=None)
def run_root_files(run_id: str, board: DashboardDep) -> FileResponse | dict[str, Any]:
    """The run directory's listing."""
    return _serve(run_id, "", board)


@router.get("/runs/{run_id}/files/{path:path}", response_model=None)
def run_file(run_id: str, path: str, board: DashboardDep) -> FileResponse | dict[str, Any]:
    """A file of the run (a directory: its listing). Refuses ``..``, absolute paths, hidden
    files (locks, temp files) and symlinks leading out of the run."""
    return _serve(run_id, path, board)
