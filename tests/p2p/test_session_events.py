"""Every step of a Prompt2Policy session is an event with its detail, and the API serves one
event in full by its number (``GET /api/runs/{id}/events/{seq}``)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM
from langmarl.web import create_app

from .test_loop import _run, replies


def test_each_loop_step_is_an_event_served_in_full(tmp_path: Path) -> None:
    result, _, session = _run(tmp_path, ScriptedLLM(replies("SCORE: 0.2")), max_iterations=2)
    names = [e["event"] for e in RunDir(session.path).events()]
    assert names == [
        "run_start", "prepared", "iteration_opened", "trained", "judged", "revised",
        "iteration_opened", "trained", "judged", "analyzed", "run_end",
    ]  # fmt: skip
    client = TestClient(create_app(tmp_path))
    listed = client.get(f"/api/runs/{result.session_id}/events?event=judged").json()["events"]
    seq = listed[0]["seq"]
    judged = client.get(f"/api/runs/{result.session_id}/events/{seq}").json()["event"]
    assert judged["event"] == "judged" and judged["iteration"] == "iter_1"
    assert judged["intent_score"] == 0.2 and judged["synthesis"] == "mean"
    assert [j["judge"] for j in judged["judges"]] == ["summary"]
    missing = client.get(f"/api/runs/{result.session_id}/events/99")
    assert missing.status_code == 404 and "no event 99" in missing.json()["error"]
