"""``GET /api/resources/status``: the machine's cores, load, memory, disk (of the runs
directory) and GPUs, for the dashboard's resource monitor (:mod:`langmarl.core.resources`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from langmarl.core.resources import resource_status
from langmarl.web.state import DashboardDep

router = APIRouter(tags=["resources"])


@router.get("/resources/status")
def status(board: DashboardDep) -> dict[str, Any]:
    """Cores (all, usable by the server), 1/5/15-minute load, memory and the runs
    directory's disk in bytes, and each NVIDIA GPU (empty list without one)."""
    return resource_status(board.root)
