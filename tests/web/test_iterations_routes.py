"""``GET /api/iterations`` over a live server (issue 42, item 7): every session's iterations
(a benchmark's sessions included) newest first, paginated, filtered by session, benchmark
and status; a run that is no session is refused; the route is in ``/openapi.json``."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from web_fixtures import grpo_run, session_run

from langmarl.testing.asgi import live_server
from langmarl.web import create_app


def _second_iteration(path: Path) -> None:
    """A running second iteration of the session in ``path``, written after the first."""
    from langmarl.p2p.session.records import SessionRecord

    SessionRecord(path).new_iteration(2).set_status("running")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("iterations") / "runs"
    session_run(root / "older")
    session_run(root / "bench_1" / "case_session")
    (root / "bench_1" / "bench.json").write_text(json.dumps({"cases": [], "summary": {}}))
    session_run(root / "newer")
    _second_iteration(root / "newer")
    grpo_run(root / "grpo")
    with live_server(create_app(root)) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield client


def _listed(answer: dict) -> list[tuple[str, str]]:
    return [(item["session_id"], item["iteration_id"]) for item in answer["iterations"]]


def test_every_sessions_iterations_newest_first(served: httpx.Client) -> None:
    answer = served.get("/api/iterations").json()
    assert answer["total"] == 4 and (answer["offset"], answer["limit"]) == (0, 50)
    assert _listed(answer) == [("newer", "iter_2"), ("newer", "iter_1"),
                               ("bench_1~case_session", "iter_1"), ("older", "iter_1")]  # fmt: skip
    first = answer["iterations"][1]
    assert (first["prompt"], first["env_id"], first["status"]) == (
        "balance the pole", "InvertedPendulum-v5", "completed")  # fmt: skip
    assert first["judgment"]["intent_score"] == 0.9 and first["reward_latex"]
    assert first["videos"][0]["url"].startswith("/api/runs/newer/files/iter_1/videos/")
    assert "/api/iterations" in served.get("/openapi.json").json()["paths"]


def test_pages_and_filters(served: httpx.Client) -> None:
    page = served.get("/api/iterations", params={"offset": 1, "limit": 2}).json()
    assert page["total"] == 4 and _listed(page) == [("newer", "iter_1"),
                                                    ("bench_1~case_session", "iter_1")]  # fmt: skip
    one = served.get("/api/iterations", params={"session": "older"}).json()
    assert _listed(one) == [("older", "iter_1")]
    bench = served.get("/api/iterations", params={"benchmark": "bench_1"}).json()
    assert _listed(bench) == [("bench_1~case_session", "iter_1")]
    running = served.get("/api/iterations", params={"status": "running"}).json()
    assert _listed(running) == [("newer", "iter_2")]
    assert served.get("/api/iterations", params={"limit": 0}).status_code == 400
    other = served.get("/api/iterations", params={"session": "grpo"})
    assert other.status_code == 404 and "not a session" in other.json()["error"]
    assert served.get("/api/iterations", params={"session": "nope"}).status_code == 404
