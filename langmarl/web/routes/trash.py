"""The trash: deleted runs (``DELETE /api/runs/{id}`` puts them there), restore, purge."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from langmarl.web.state import DashboardDep

router = APIRouter(tags=["trash"])


@router.get("/trash")
def list_trash(board: DashboardDep) -> list[dict[str, Any]]:
    """Deleted runs, most recent first: trash id, run id, kind, original path, when."""
    return board.trash.items()


@router.post("/trash/{trash_id}/restore")
def restore(trash_id: str, board: DashboardDep) -> dict[str, Any]:
    """Put a deleted run back where it was (409 if something took its place)."""
    return board.trash.restore(trash_id)


@router.delete("/trash/{trash_id}")
def purge(trash_id: str, board: DashboardDep) -> dict[str, Any]:
    """Delete a trashed run for good."""
    return board.trash.purge(trash_id)
