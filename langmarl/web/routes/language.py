"""Language space (``language``, ``parl_language`` runs): policies per agent per
checkpoint and their diffs, trajectories with the critic's evaluation (paged), gradients,
and the update decisions (``updates.jsonl``); all read through :mod:`langmarl.store`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from langmarl.store import LocalStore, PolicyCheckpoint
from langmarl.store.local import episode_file, iter_dir
from langmarl.web.errors import ApiError
from langmarl.web.index import require_view
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["language space"])


def _language_run(board: Dashboard, run_id: str) -> tuple[LocalStore, PolicyCheckpoint, str]:
    """The store, the policy checkpoints and the store's id of language run ``run_id``."""
    entry = board.run(run_id)
    require_view(entry, "language", "policies", "policies, trajectories and gradients")
    store = LocalStore(entry.path.parent)
    info = store.read_json(entry.path.name, "run.json", default={}) or {}
    agent_ids = list(info.get("agent_ids") or [])
    checkpoint = PolicyCheckpoint(store, entry.path.name, len(agent_ids), agent_ids)
    return store, checkpoint, entry.path.name


def _iteration(checkpoint: PolicyCheckpoint, iteration: int | None, what: str) -> int:
    done = checkpoint.iterations()
    if not done:
        raise ApiError(404, f"the run has no {what} yet", "wait for its first iteration")
    if iteration is None:
        return done[-1]
    if iteration not in done:
        raise ApiError(
            404, f"the run has no checkpoint {iteration}",
            f"choose an iteration from {done}",
        )  # fmt: skip
    return iteration


@router.get("/runs/{run_id}/policies")
def policies(
    run_id: str, board: DashboardDep, iteration: int | None = Query(None, ge=0)
) -> dict[str, Any]:
    """Every checkpoint (or only ``?iteration=N``): the policy of each agent, the stats of
    the iteration that produced it and its policy updates."""
    _, checkpoint, _ = _language_run(board, run_id)
    wanted = checkpoint.iterations() if iteration is None else [iteration]
    checkpoints = []
    for number in wanted:
        _iteration(checkpoint, number, "policies")
        manifest = checkpoint.manifest(number)
        checkpoints.append({
            "iteration": number, "policies": checkpoint.get_policies(number),
            "stats": manifest.get("stats"), "updates": manifest.get("updates", []),
        })  # fmt: skip
    return {"run_id": run_id, "iterations": checkpoint.iterations(), "checkpoints": checkpoints}


@router.get("/runs/{run_id}/policies/diff")
def policy_diff(
    run_id: str,
    board: DashboardDep,
    from_: int | None = Query(None, alias="from", ge=0, description="Default: the first."),
    to: int | None = Query(None, ge=0, description="Default: the latest checkpoint."),
) -> dict[str, Any]:
    """A unified diff per agent between two checkpoints ("" where a policy is unchanged)."""
    _, checkpoint, _ = _language_run(board, run_id)
    last = _iteration(checkpoint, to, "policies")
    first = checkpoint.iterations()[0] if from_ is None else _iteration(checkpoint, from_, "")
    return {"run_id": run_id, "from": first, "to": last,
            "diffs": checkpoint.diff_policies(first, last)}  # fmt: skip


def _episodes(store: LocalStore, run: str, kind: str, iteration: int) -> list[int]:
    files = store.list_files(run, iter_dir(kind, iteration), "ep_*.json")
    return [int(p.stem.removeprefix("ep_")) for p in files]


def _stored(store: LocalStore, run: str, kind: str) -> list[int]:
    """The iterations with stored ``kind`` (``trajectories``, ``gradients``), in order."""
    folders = store.list_files(run, kind, "iter_*")
    return [int(p.name.removeprefix("iter_")) for p in folders if p.is_dir()]


def _pick(store: LocalStore, run: str, kind: str, iteration: int | None) -> tuple[int, list[int]]:
    """``iteration`` (default: the latest) among those with stored ``kind``, and all of them."""
    available = _stored(store, run, kind)
    if not available:
        raise ApiError(404, f"the run has stored no {kind} yet", "wait for an iteration")
    number = available[-1] if iteration is None else iteration
    if number not in available:
        raise ApiError(404, f"no {kind} of iteration {number}", f"choose from {available}")
    return number, available


@router.get("/runs/{run_id}/trajectories")
def trajectories(
    run_id: str,
    board: DashboardDep,
    iteration: int | None = Query(None, ge=0, description="Default: the latest."),
    offset: int = Query(0, ge=0),
    limit: int = Query(20, ge=1, le=200),
) -> dict[str, Any]:
    """The episodes of one iteration, a page at a time, each with the critic's evaluation.
    ``gradient_iterations`` lists the iterations with textual gradients (none for a pool
    run). A run with no episodes stored yet answers ``iteration: null`` and no episodes
    (a 404 only for an ``iteration`` it does not have)."""
    store, _, run = _language_run(board, run_id)
    graded = _stored(store, run, "gradients")
    if iteration is None and not _stored(store, run, "trajectories"):
        return {"run_id": run_id, "iteration": None, "iterations": [], "total": 0,
                "offset": offset, "episodes": [], "gradient_iterations": graded}  # fmt: skip
    number, available = _pick(store, run, "trajectories", iteration)
    episodes = _episodes(store, run, "trajectories", number)
    page = [
        {
            "episode": ep,
            "trajectory": store.read_json(run, episode_file("trajectories", number, ep)),
            "evaluation": store.load_evaluation(run, number, ep),
        }
        for ep in episodes[offset : offset + limit]
    ]
    return {"run_id": run_id, "iteration": number, "iterations": available,
            "total": len(episodes), "offset": offset, "episodes": board.scrub(page),
            "gradient_iterations": graded}  # fmt: skip


@router.get("/runs/{run_id}/gradients")
def gradients(
    run_id: str, board: DashboardDep, iteration: int | None = Query(None, ge=0)
) -> dict[str, Any]:
    """The textual gradients of one iteration: per episode and agent, and aggregated."""
    store, _, run = _language_run(board, run_id)
    number, available = _pick(store, run, "gradients", iteration)
    episodes = {
        str(ep): store.load_gradients(run, number, ep)
        for ep in _episodes(store, run, "gradients", number)
    }
    return {"run_id": run_id, "iteration": number, "iterations": available,
            "episodes": episodes, "aggregated": store.load_aggregated(run, number)}  # fmt: skip


@router.get("/runs/{run_id}/updates")
def update_decisions(
    run_id: str, board: DashboardDep, iteration: int | None = Query(None, ge=0)
) -> dict[str, Any]:
    """What happened to every candidate policy (``updates.jsonl``): score, accepted, why."""
    store, _, run = _language_run(board, run_id)
    decisions = store.load_update_decisions(run)
    if iteration is not None:
        decisions = [d for d in decisions if d.get("iteration") == iteration]
    return {"run_id": run_id, "decisions": decisions}


COMPARE_SUFFIX = "_compare.json"
COMPARED = ("iteration", "num_episodes", "avg_reward", "interval", "failed_episodes")


@router.get("/runs/{run_id}/heldout")
def heldout(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """The held-out comparisons ``langmarl eval`` wrote (``evals/<split>_compare.json``):
    per split the initial and final checkpoints' mean reward with its 95% interval (clipped
    to the env's reward range), and the difference."""
    store, _, run = _language_run(board, run_id)
    found = []
    for path in store.list_files(run, "evals", f"*{COMPARE_SUFFIX}"):
        result = store.read_json(run, f"evals/{path.name}") or {}
        parts = {
            k: {f: (result.get(k) or {}).get(f) for f in COMPARED} for k in ("initial", "final")
        }
        split = result.get("split", path.name.removesuffix(COMPARE_SUFFIX))
        notes = {"difference": result.get("difference"), "note": result.get("note")}
        found.append({"split": split, **parts, **notes})
    return {"run_id": run_id, "heldout": found}
