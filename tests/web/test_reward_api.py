"""Reward-space views of a Prompt2Policy session: iterations, one iteration in full, its
per-term metrics, the video, the analysis, and benchmark tables."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_iterations_of_a_session(client: TestClient) -> None:
    body = client.get("/api/runs/session/iterations").json()
    assert (body["prompt"], body["best_score"], body["status"]) == ("balance the pole", 0.9,
                                                                    "passed")  # fmt: skip
    [it] = body["iterations"]
    assert (it["iteration_id"], it["status"], it["reward_origin"]) == ("iter_1", "completed",
                                                                       "structured")  # fmt: skip
    assert [(c["name"], c["origin"], c["score"]) for c in it["candidates"]] == [
        ("c_1", "structured", 0.9), ("c_2", "random", 0.4)]  # fmt: skip
    assert it["winner"] == "c_1"  # the search's candidates, served as the history has them
    assert it["reward_latex"] == r"r = 1 - |\theta|" and it["judgment"]["passed"] is True
    assert it["videos"] == [
        {
            "name": "eval_100_median.mp4",
            "url": "/api/runs/session/files/iter_1/videos/eval_100_median.mp4",
        }
    ]


def test_one_iteration_in_full_and_its_video(client: TestClient) -> None:
    body = client.get("/api/runs/session/iterations/iter_1").json()
    assert "def reward_fn" in body["reward_code"]
    assert body["reward_spec"]["terms"] == {"upright": "1 - angle"}
    assert body["judgment"]["diagnosis"] == "stays up" and body["runs"] == []
    video = client.get(body["videos"][0]["url"])
    assert video.status_code == 200 and video.content.endswith(b"ftypmp42fake")
    assert video.headers["content-type"] == "video/mp4"


def test_per_term_metrics(client: TestClient) -> None:
    body = client.get("/api/runs/session/iterations/iter_1/metrics").json()
    assert body["train"] == [{"type": "train", "step": 50, "upright": 0.5}]
    assert body["eval"][0]["mean_return"] == 3.0
    response = client.get("/api/runs/session/iterations/iter_1/metrics?run=seed_9")
    assert response.status_code == 404 and "single-run" in response.json()["fix"]


def test_unknown_iterations_and_other_kinds(client: TestClient) -> None:
    for bad in ("iter_7", "%2E%2E", "logs"):  # %2E%2E: a client would resolve a plain ..
        response = client.get(f"/api/runs/session/iterations/{bad}")
        assert response.status_code == 404, bad
    assert "iter_1" in client.get("/api/runs/session/iterations/iter_7").json()["fix"]
    response = client.get("/api/runs/lang/iterations")
    assert response.status_code == 404 and "language run" in response.json()["error"]
    assert client.get("/api/runs/session/analysis").json()["analysis"] is None


def test_benchmark_tables(client: TestClient) -> None:
    [bench] = client.get("/api/benchmarks").json()
    assert (bench["bench_id"], bench["cases"]) == ("bench_1", 1)
    assert bench["summary"]["success_rate"] == 1.0
    body = client.get("/api/benchmarks/bench_1").json()
    assert body["cases"][0]["run_id"] == "bench_1~case_session"
    assert client.get(f"/api/runs/{body['cases'][0]['run_id']}").status_code == 200
    response = client.get("/api/benchmarks/nope")
    assert response.status_code == 404 and "GET /api/benchmarks" in response.json()["fix"]
