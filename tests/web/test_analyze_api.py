"""``POST /api/runs/{id}/analyze``: the session analysis streamed as server-sent events, one
per step as it completes, then the analysis, written to ``analysis.json``."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from web_fixtures import magrpo_run, session_run

from langmarl.p2p.analysis.analyze import STEPS
from langmarl.web import create_app


def _events(text: str) -> list[tuple[str, dict]]:
    found, event = [], ""
    for line in text.splitlines():
        if line.startswith("event: "):
            event = line.removeprefix("event: ")
        elif line.startswith("data: "):
            found.append((event, json.loads(line.removeprefix("data: "))))
    return found


def test_analyze_streams_each_step_then_the_analysis_and_writes_it(tmp_path: Path) -> None:
    session = session_run(tmp_path / "runs" / "session")
    client = TestClient(create_app(tmp_path / "runs"))
    assert client.get("/api/runs/session/analysis").json()["analysis"] is None
    response = client.post("/api/runs/session/analyze")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _events(response.text)
    assert [e for e, _ in events] == ["step"] * len(STEPS) + ["analysis"]
    assert [data["step"] for _, data in events[:-1]] == list(STEPS)
    assert events[0][1]["result"]["best"] == {"iteration": 1, "intent_score": 0.9,
                                              "mean_return": 3.0, "by_return": 1}  # fmt: skip
    analysis = events[-1][1]
    assert analysis["status"] == "passed" and analysis["narrative_source"] == "rules"
    assert json.loads((session / "analysis.json").read_text()) == analysis
    assert client.get("/api/runs/session/analysis").json()["analysis"] == analysis
    assert "/api/runs/{run_id}/analyze" in client.get("/openapi.json").json()["paths"]


def test_a_failure_part_way_is_the_last_event(tmp_path: Path) -> None:
    session = session_run(tmp_path / "runs" / "session")
    (session / "iter_1" / "summary.json").write_text('{"env_id": 1}')  # not a TrainSummary
    response = TestClient(create_app(tmp_path / "runs")).post("/api/runs/session/analyze")
    [(event, problem)] = _events(response.text)
    assert event == "error" and "ValidationError" in problem["error"] and problem["fix"]
    assert not (session / "analysis.json").exists()


def test_only_sessions_are_analysed_and_the_token_guards_it(tmp_path: Path) -> None:
    magrpo_run(tmp_path / "runs" / "mag")
    session_run(tmp_path / "runs" / "session")
    client = TestClient(create_app(tmp_path / "runs"))
    response = client.post("/api/runs/mag/analyze")
    assert response.status_code == 404 and "has no analysis" in response.json()["error"]
    assert client.post("/api/runs/nope/analyze").status_code == 404
    guarded = TestClient(create_app(tmp_path / "runs", token="t" * 32))
    assert guarded.post("/api/runs/session/analyze").status_code == 401
    assert not (tmp_path / "runs" / "session" / "analysis.json").exists()
