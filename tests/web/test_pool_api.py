"""A pool-search run (issue 42, item 2) through the API: its pool (candidates, parents,
per-task scores, the front, the best candidate's demonstrations), the phase of a run that
runs, trajectories before the first episode, and pool lines on the live stream."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from web_fixtures import line_of, pool_run, stage_running

from langmarl.testing.asgi import live_server
from langmarl.web import create_app

EVENTS, POOL, METRICS = "logs/events.jsonl", "pool.jsonl", "metrics.jsonl"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 2-round pool run (the runs grown from it are copies)."""
    return pool_run(tmp_path_factory.mktemp("built"))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_pool_of_a_finished_run(built: Path) -> None:
    client = TestClient(create_app(built.parent))
    body = client.get("/api/runs/pool/pool").json()
    written = _lines(built / POOL)
    last = _lines(built / METRICS)[-1]
    assert [c["id"] for c in body["candidates"]] == [c["id"] for c in written]
    assert body["front"] == last["front"] and body["best"] == last["best_candidate"]
    assert [c["id"] for c in body["candidates"] if c["on_front"]] == last["front"]
    child = body["candidates"][-1]
    assert child["parents"] == written[-1]["parents"] and child["parents"]
    assert child["task_scores"] == written[-1]["task_scores"] and len(body["tasks"]) == 3
    assert "policies" not in child  # only the best candidate's, as demonstrations
    assert body["candidates"][0]["origin"] == "initial" and body["candidates"][0]["parents"] == []
    demos = body["demonstrations"]
    assert set(demos) == {"key_word", "tagline"}
    best = next(c for c in written if c["id"] == body["best"])
    first = demos["key_word"]["demonstrations"][0]
    assert f"### demonstration output\n{first['output']}" in best["policies"]["key_word"]
    assert demos["key_word"]["instruction"] == "You are a helpful assistant."


def test_before_the_first_round_ends_the_starting_candidate_is_the_front(
    built: Path, tmp_path: Path
) -> None:
    served = tmp_path / "runs" / "pool"
    stage_running(built, served, {POOL: 1, METRICS: 0, EVENTS: 3})
    client = TestClient(create_app(tmp_path / "runs"))
    body = client.get("/api/runs/pool/pool").json()
    assert [c["id"] for c in body["candidates"]] == [0]
    assert body["front"] == [0] and body["best"] == 0
    assert body["demonstrations"]["tagline"]["demonstrations"] == []


def test_the_phase_of_a_pool_run_as_it_runs(built: Path, tmp_path: Path) -> None:
    served = tmp_path / "runs" / "pool"
    client = TestClient(create_app(tmp_path / "runs"))
    events = built / EVENTS

    def phase(lines: dict[str, int]) -> str:
        stage_running(built, served, lines)
        return client.get("/api/runs/pool").json()["phase"]

    started = line_of(events, "run_start")
    assert phase({EVENTS: started, POOL: 0}) == (
        "iteration 1 · scoring the starting policies on the validation batch"
    )
    third = line_of(events, "episode", 3)
    assert phase({EVENTS: third, POOL: 1}) == "iteration 1 · generating episodes (3/8)"
    assert phase({EVENTS: line_of(events, "episode", 8), POOL: 1}).startswith(
        "iteration 1 · proposing and scoring candidates"
    )
    assert phase({EVENTS: line_of(events, "iteration_end")}) == "iteration 2 · starting"
    last = line_of(events, "iteration_end", 2)
    assert phase({EVENTS: last}) == "iteration 2 done · finishing the run"
    (served / "run.json").write_text((built / "run.json").read_text())  # completed
    assert client.get("/api/runs/pool").json()["phase"] is None


def test_no_trajectories_yet_is_an_empty_answer_not_an_error(built: Path, tmp_path: Path) -> None:
    stage_running(built, tmp_path / "runs" / "pool", {EVENTS: 2}, trajectories=False)
    client = TestClient(create_app(tmp_path / "runs"))
    body = client.get("/api/runs/pool/trajectories?limit=1").json()
    assert body["iterations"] == [] and body["episodes"] == [] and body["iteration"] is None
    assert client.get("/api/runs/pool/trajectories?iteration=0").status_code == 404
    full = TestClient(create_app(built.parent)).get("/api/runs/pool/trajectories").json()
    assert full["iterations"] == [0, 1] and full["gradient_iterations"] == []  # a pool run


def test_other_searches_and_kinds(client: TestClient) -> None:
    """A language run of the Monte Carlo search has an empty pool and no phase once done;
    a run of another kind has no pool (404 with the reason)."""
    body = client.get("/api/runs/lang/pool").json()
    assert body["candidates"] == [] and body["best"] is None
    assert client.get("/api/runs/lang").json()["phase"] is None
    assert client.get("/api/runs/lang/trajectories").json()["gradient_iterations"] == [0, 1]
    response = client.get("/api/runs/weights~mag/pool")
    assert response.status_code == 404 and "language" in response.json()["fix"]


def test_pool_lines_are_streamed(built: Path, tmp_path: Path) -> None:
    served = tmp_path / "runs" / "pool"
    stage_running(built, served, {POOL: 1, EVENTS: 3})
    app = create_app(tmp_path / "runs", poll_interval=0.05)
    with live_server(app) as url, httpx.stream("GET", f"{url}/api/runs/pool/stream") as response:
        lines = response.iter_lines()
        assert next(line for line in lines if line.startswith("event: ")) == "event: status"
        stage_running(built, served, {POOL: 3, EVENTS: 3})
        (served / "run.json").write_text((built / "run.json").read_text())
        found = [line for line in lines if line.startswith("event: ")]
    assert found.count("event: pool") == 2, found
