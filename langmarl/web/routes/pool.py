"""``GET /api/runs/{id}/pool``: the candidates of a pool-search language run
(``search: pool``), the Pareto front, the best candidate and its demonstrations, read by
:mod:`langmarl.web.pool`. A language run of another search answers an empty pool."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from langmarl.web.index import require_view
from langmarl.web.pool import read_pool
from langmarl.web.state import DashboardDep

router = APIRouter(tags=["language space"])


@router.get("/runs/{run_id}/pool")
def pool(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """Every candidate (id, round, origin, parents, per-task and per-agent scores, accepted
    and why, on the front), the front, the best candidate and its demonstrations per agent.
    ``iteration`` is counted from 0, as in the run's files."""
    path = require_view(board.run(run_id), "language", "pool", "pool candidates")
    return {"run_id": run_id, **board.scrub(read_pool(path))}
