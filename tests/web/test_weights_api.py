"""Weight-space views: checkpoints, evaluations and held-out report, sample completions,
PARL GRPO curves."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_checkpoints_list_only_complete_ones(client: TestClient) -> None:
    body = client.get("/api/runs/weights~mag/checkpoints").json()
    [checkpoint] = body["checkpoints"]
    assert (checkpoint["name"], checkpoint["step"]) == ("step-000004", 4)
    assert checkpoint["state"]["algorithm"] == "magrpo"
    assert checkpoint["files"] == ["trainer_state.json"]
    assert client.get("/api/runs/grpo/checkpoints").json()["checkpoints"] == []


def test_eval_heldout_and_samples(client: TestClient) -> None:
    body = client.get("/api/runs/weights~mag/eval").json()
    assert body["eval"] == [{"step": 4, "eval_return": 0.8, "eval_reward_turn1": 0.8}]
    assert body["heldout"]["before"]["interval"]["mean"] == 0.5
    assert body["heldout"]["after"]["interval"]["mean"] == 0.9
    assert "samples" not in body["heldout"]["after"]
    samples = client.get("/api/runs/weights~mag/samples").json()["samples"]
    assert samples["before"][0]["prompt"] == "Name a colour."
    assert samples["after"][0]["return"] == 0.9
    empty = client.get("/api/runs/grpo/samples").json()["samples"]
    assert empty == {"before": [], "after": []}


def test_parl_curves(client: TestClient) -> None:
    body = client.get("/api/runs/grpo/curves?limit=1").json()
    assert body["curve"] == [{"step": 0, "speedup": 2.0}]
    assert body["total"] == 2 and [e["task_id"] for e in body["episodes"]] == ["t0"]
    response = client.get("/api/runs/weights~mag/curves")
    assert response.status_code == 404 and "parl_grpo" in response.json()["fix"]


def test_weight_views_of_other_kinds_are_404(client: TestClient) -> None:
    for route in ("checkpoints", "eval", "samples", "curves"):
        response = client.get(f"/api/runs/session/{route}")
        assert response.status_code == 404, route
        assert "p2p run" in response.json()["error"]
