"""Weight space (``magrpo``, ``iac``, ``maac``, ``parl_grpo`` runs): checkpoints, the
evaluations (``eval.jsonl``) and held-out report, the sample completions the held-out
report keeps, and PARL GRPO's per-step curves. Plain JSON is read here: serving a run never
loads torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Query

from langmarl.core.files import read_jsonl
from langmarl.web.errors import ApiError
from langmarl.web.index import RunEntry
from langmarl.web.runfiles import read_json
from langmarl.web.state import DashboardDep

router = APIRouter(tags=["weight space"])

WEIGHT_KINDS = ("magrpo", "iac", "maac", "parl_grpo")
STATE_FILE = "trainer_state.json"
"""Written last into every complete checkpoint (both weight-space checkpoint layouts)."""


def _weight_run(entry: RunEntry) -> Path:
    if entry.summary.kind not in WEIGHT_KINDS:
        raise ApiError(
            404, f"run {entry.run_id!r} is a {entry.summary.kind} run: it has no weights",
            f"checkpoints and evaluations belong to {', '.join(WEIGHT_KINDS)} runs",
        )  # fmt: skip
    return entry.path


@router.get("/runs/{run_id}/checkpoints")
def checkpoints(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """The run's complete checkpoints (``checkpoints/step-*``): step, trainer state, files."""
    run = _weight_run(board.run(run_id))
    found = []
    for folder in sorted((run / "checkpoints").glob("step-*")):
        state = read_json(folder / STATE_FILE)
        if not isinstance(state, dict):  # still being written, or torn
            continue
        found.append({
            "name": folder.name, "step": int(folder.name.removeprefix("step-")),
            "state": board.scrub(state),
            "files": sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                            if p.is_file()),
        })  # fmt: skip
    return {"run_id": run_id, "checkpoints": found}


def _heldout(run: Path) -> dict[str, Any] | None:
    report = read_json(run / "heldout.json")
    return report if isinstance(report, dict) else None


@router.get("/runs/{run_id}/eval")
def evaluations(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """Evaluations during training (``eval.jsonl``) and the held-out report's intervals
    before and after training (its completions: ``/samples``)."""
    run = _weight_run(board.run(run_id))
    report = _heldout(run)
    heldout = None
    if report is not None:
        heldout = {"task": report.get("task")}
        for part in ("before", "after"):
            score = report.get(part) or {}
            heldout[part] = {k: score.get(k) for k in ("label", "interval", "returns")}
    rows = [r for r in read_jsonl(run / "eval.jsonl") if isinstance(r, dict)]
    return {"run_id": run_id, "eval": rows, "heldout": heldout}


@router.get("/runs/{run_id}/samples")
def samples(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """Sample completions the run stored: the held-out report's examples (prompt, each
    agent's completions, return), before and after training; empty if it stored none."""
    run = _weight_run(board.run(run_id))
    report = _heldout(run) or {}
    found = {part: (report.get(part) or {}).get("samples", []) for part in ("before", "after")}
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
    entry = board.run(run_id)
    run = _weight_run(entry)
    document = read_json(run / "parl_curves.json")
    if not isinstance(document, dict):
        raise ApiError(
            404, f"run {run_id!r} has no parl_curves.json",
            "curves are written by PARL GRPO runs (kind parl_grpo) after their first step",
        )  # fmt: skip
    episodes = document.get("episodes") or []
    return {"run_id": run_id, "curve": document.get("curve") or [], "total": len(episodes),
            "episodes": board.scrub(episodes[offset : offset + limit])}  # fmt: skip
