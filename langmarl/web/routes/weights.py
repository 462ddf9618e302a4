"""Weight space (``magrpo``, ``iac``, ``maac``, ``parl_grpo`` runs): checkpoints, the
evaluations and held-out report, the sample completions the held-out report keeps, and PARL
GRPO's per-step curves, read through the reader the run's kind names
(:mod:`langmarl.magrpo.records`: plain JSON, so serving a run never loads torch)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from langmarl.store import kinds
from langmarl.web.errors import ApiError
from langmarl.web.index import RunEntry, require_view
from langmarl.web.state import DashboardDep

router = APIRouter(tags=["weight space"])


def _files(entry: RunEntry) -> Any:
    """The weight run's files, read by its kind's reader (checkpoints, evaluations, …)."""
    path = require_view(entry, "weight", "weights", "checkpoints and evaluations")
    return kinds.load(kinds.get(entry.summary.kind).reader or kinds.WEIGHT_READER)(path)


@router.get("/runs/{run_id}/checkpoints")
def checkpoints(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """The run's complete checkpoints (``checkpoints/step-*``): step, trainer state, files."""
    found = _files(board.run(run_id)).checkpoints()
    return {"run_id": run_id, "checkpoints": board.scrub(found)}


@router.get("/runs/{run_id}/eval")
def evaluations(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """Evaluations during training (``eval.jsonl``) and the held-out report's intervals
    before and after training (its completions: ``/samples``)."""
    files = _files(board.run(run_id))
    return {"run_id": run_id, "eval": files.evaluations(), "heldout": files.heldout_summary()}


@router.get("/runs/{run_id}/samples")
def samples(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """Sample completions the run stored: the held-out report's examples (prompt, each
    agent's completions, return), before and after training; empty if it stored none."""
    found = _files(board.run(run_id)).samples()
    return {"run_id": run_id, "samples": board.scrub(found)}


@router.get("/runs/{run_id}/curves")
def parl_curves(
    run_id: str,
    board: DashboardDep,
    offset: int = Query(0, ge=0),
    limit: int = Query(200, ge=1, le=2000),
) -> dict[str, Any]:
    """PARL GRPO's curves (``parl_curves.json``): per step the means of the PARL terms and
    the speed-up, and a page of the per-episode rows."""
    document = _files(board.run(run_id)).curves()
    if document is None:
        raise ApiError(
            404, f"run {run_id!r} has no parl_curves.json",
            "curves are written by PARL GRPO runs (kind parl_grpo) after their first step",
        )  # fmt: skip
    episodes = document.get("episodes") or []
    return {"run_id": run_id, "curve": document.get("curve") or [], "total": len(episodes),
            "episodes": board.scrub(episodes[offset : offset + limit])}  # fmt: skip
