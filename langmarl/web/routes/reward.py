"""Reward space (``p2p`` runs), mirroring the reference's session views: the
iterations of a session (reward origin, intent score, return, judgment, LaTeX of the reward,
videos), one iteration in full (reward code, revised code, spec, judgment, training summary,
config, executor runs), its per-term training and evaluation metrics and the session's
analysis. Benchmarks (``langmarl p2p bench``) have their own routes: :mod:`.benchmarks`.

Videos are served by the files route; each iteration lists their URLs. A session is read
through the reader its kind names (:attr:`~langmarl.store.kinds.RunKindSpec.reader`, the
session record of :mod:`langmarl.p2p.session.records`): the server imports no space.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from starlette.concurrency import iterate_in_threadpool

from langmarl.store import kinds
from langmarl.web.errors import ApiError
from langmarl.web.index import RunEntry, require_view
from langmarl.web.latex import latex_mathml
from langmarl.web.runfiles import read_json
from langmarl.web.state import Dashboard, DashboardDep

router = APIRouter(tags=["reward space"])

ITERATION_ID = re.compile(r"iter_\d+")


Session = Any
"""A session record (its kind's reader): iterations, history, metadata, analysis."""
Iteration = Any
"""One iteration's record: reward code and spec, judgment, summary, metrics, videos."""


def _session(entry: RunEntry) -> Session:
    path = require_view(entry, "reward", "iterations", "iterations, judgments and videos")
    reader = kinds.get(entry.summary.kind).reader
    if reader is None:
        raise ApiError(404, f"run {entry.run_id!r} has no reader for its iterations",
                       "register its kind with a reader entry point")  # fmt: skip
    return kinds.load(reader)(path)


def _iteration(session: Session, iteration_id: str) -> Iteration:
    record = session.get_iteration(iteration_id) if ITERATION_ID.fullmatch(iteration_id) else None
    if record is None:
        known = [r.iteration_id for r in session.iteration_records()]
        raise ApiError(404, f"no iteration {iteration_id!r} in the session",
                       f"choose one of {known or '(none yet)'}")  # fmt: skip
    return record


def _videos(run_id: str, record: Iteration, prefix: str) -> list[dict[str, str]]:
    return [
        {"name": name, "url": f"/api/runs/{run_id}/files/{prefix}/videos/{name}"}
        for name in record.video_filenames()
    ]


def _iteration_summary(run_id: str, record: Iteration, loop: dict[str, Any]) -> dict:
    spec = record.read_reward_spec()
    judgment = record.read_judgment()
    summary = record.read_summary()
    return {
        "iteration_id": record.iteration_id, **loop, "status": record.derive_status(),
        "progress": record.compute_progress(), "reward_latex": spec.latex,
        "reward_description": spec.description, "reward_terms": spec.terms,
        "judgment": None if judgment is None else {
            "intent_score": judgment.intent_score, "passed": judgment.passed,
            "diagnosis": judgment.diagnosis, "failure_tags": judgment.failure_tags,
        },
        "final_episodic_return": None if summary is None else summary.final_episodic_return,
        "videos": _videos(run_id, record, record.iteration_id),
    }  # fmt: skip


@router.get("/runs/{run_id}/iterations")
def iterations(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """The session's iterations in order, with what the loop recorded about each."""
    session = _session(board.run(run_id))
    history = session.read_history() or {}
    loop = {str(it.get("iteration_id")): it for it in history.get("iterations", [])}
    items = [
        _iteration_summary(run_id, record, loop.get(record.iteration_id, {}))
        for record in session.iteration_records()
    ]
    return {
        "run_id": run_id, "prompt": (session.read_metadata() or {}).get("prompt"),
        "status": history.get("status"), "best_iteration": history.get("best_iteration"),
        "best_score": history.get("best_score"), "iterations": board.scrub(items),
    }  # fmt: skip


def _read_text(path: Any) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


@router.get("/runs/{run_id}/iterations/{iteration_id}")
def iteration_detail(run_id: str, iteration_id: str, board: DashboardDep) -> dict[str, Any]:
    """One iteration in full: reward code (and the revised one), its spec with LaTeX, the
    judgment with every judge's score, the training summary, config and executor runs."""
    record = _iteration(_session(board.run(run_id)), iteration_id)
    judgment, summary = record.read_judgment(), record.read_summary()
    status = record.read_status() or {"status": record.derive_status()}
    detail = {
        "iteration_id": iteration_id, "status": status, "config": record.read_config(),
        "reward_code": record.read_reward_source(),
        "reward_spec": (spec := record.read_reward_spec()).model_dump(),
        "reward_mathml": latex_mathml(spec.latex),  # None: the page shows the LaTeX as text
        "revised_reward_code": _read_text(record.revised_reward_path),
        "prompt": _read_text(record.prompt_path),
        "judgment": None if judgment is None else judgment.model_dump(),
        "summary": None if summary is None else summary.model_dump(),
        "aggregation": read_json(record.aggregation_path),
        "runs": [r.iteration_id for r in record.run_records()],
        "videos": _videos(run_id, record, iteration_id),
    }  # fmt: skip
    return board.scrub(detail)


@router.get("/runs/{run_id}/iterations/{iteration_id}/metrics")
def iteration_metrics(
    run_id: str,
    iteration_id: str,
    board: DashboardDep,
    run: str | None = Query(None, description="An executor run of a multi-run iteration."),
) -> dict[str, Any]:
    """Per-term training rows and evaluation rows (``metrics/scalars.jsonl``) of the
    iteration, or of one of its executor runs."""
    record = _iteration(_session(board.run(run_id)), iteration_id)
    if run is not None:
        runs = {r.iteration_id: r for r in record.run_records()}
        if run not in runs:
            raise ApiError(404, f"no run {run!r} in {iteration_id}",
                           f"choose one of {sorted(runs) or '(single-run iteration)'}")  # fmt: skip
        record = runs[run]
    train, evaluation = record.parse_scalars()
    return {"run_id": run_id, "iteration_id": iteration_id, "run": run,
            "train": train, "eval": evaluation}  # fmt: skip


@router.get("/runs/{run_id}/analysis")
def analysis(run_id: str, board: DashboardDep) -> dict[str, Any]:
    """The session's post-session analysis (``analysis.json``), if one was written."""
    session = _session(board.run(run_id))
    return {"run_id": run_id, "analysis": board.scrub(session.read_analysis())}


@router.post("/runs/{run_id}/analyze", response_class=StreamingResponse)
def analyze(run_id: str, board: DashboardDep) -> StreamingResponse:
    """Analyse the session again and stream it as server-sent events: ``event: step``
    (``{"step", "result"}``) as each step completes (iterations, terms, plateaus, dynamics,
    narrative), then ``event: analysis`` with the whole analysis, already written to
    ``analysis.json``; ``event: error`` (``{"error", "fix"}``) if it fails part-way. The
    narrative is the rule-based one: the dashboard runs no model."""
    entry = board.run(run_id)
    path = require_view(entry, "reward", "analysis", "session analyses")
    analyzer = kinds.get(entry.summary.kind).analyze
    if analyzer is None:
        raise ApiError(404, f"run {run_id!r} has no analyzer",
                       "register its kind with an analyze entry point")  # fmt: skip
    return StreamingResponse(
        _analysis_stream(board, kinds.load(analyzer)(path)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _analysis_stream(
    board: Dashboard, steps: Iterator[tuple[str, Any]]
) -> AsyncIterator[str]:
    """The SSE messages of ``steps`` (each step computed in a worker thread)."""
    try:
        async for name, result in iterate_in_threadpool(steps):
            event = "analysis" if name == "analysis" else "step"
            data = result if event == "analysis" else {"step": name, "result": result}
            yield f"event: {event}\ndata: {board.redact(json.dumps(board.scrub(data)))}\n\n"
    except Exception as exc:  # the response has started: the failure becomes its last event
        problem = {"error": board.redact(f"the analysis failed: {type(exc).__name__}: {exc}"),
                   "fix": "check the session's files (GET /api/runs/{id}/iterations)"}  # fmt: skip
        yield f"event: error\ndata: {json.dumps(problem)}\n\n"
