"""Language-space views of a run a real trainer wrote: policies, diffs, trajectories with the
critic's evaluation, gradients, update decisions."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_policies_per_agent_per_checkpoint(client: TestClient) -> None:
    body = client.get("/api/runs/lang/policies").json()
    assert body["iterations"] == [0, 1, 2]
    first, last = body["checkpoints"][0], body["checkpoints"][-1]
    assert set(first["policies"]) == {"researcher", "answerer"}
    assert "one word" in last["policies"]["answerer"] and last["stats"]["iteration"] == 1
    one = client.get("/api/runs/lang/policies?iteration=1").json()["checkpoints"]
    assert [c["iteration"] for c in one] == [1]
    response = client.get("/api/runs/lang/policies?iteration=9")
    assert response.status_code == 404 and "[0, 1, 2]" in response.json()["fix"]


def test_policy_diff_between_checkpoints(client: TestClient) -> None:
    body = client.get("/api/runs/lang/policies/diff").json()
    assert (body["from"], body["to"]) == (0, 2)
    assert "+You answer with one word" in body["diffs"]["answerer"]
    same = client.get("/api/runs/lang/policies/diff?from=2&to=2").json()
    assert same["diffs"] == {"researcher": "", "answerer": ""}
    assert client.get("/api/runs/lang/policies/diff?from=7").status_code == 404
    assert client.get("/api/runs/lang/policies/diff?from=a").status_code == 400


def test_trajectories_paged_with_the_critics_evaluation(client: TestClient) -> None:
    body = client.get("/api/runs/lang/trajectories?iteration=0&limit=1").json()
    assert body["total"] == 2 and body["iterations"] == [0, 1]
    [episode] = body["episodes"]
    assert episode["episode"] == 0 and episode["trajectory"]["steps"]
    assert "quote the fact" in str(episode["evaluation"])
    second = client.get("/api/runs/lang/trajectories?iteration=0&offset=1").json()
    assert [e["episode"] for e in second["episodes"]] == [1]
    assert client.get("/api/runs/lang/trajectories").json()["iteration"] == 1
    response = client.get("/api/runs/lang/trajectories?iteration=5")
    assert response.status_code == 404 and "[0, 1]" in response.json()["fix"]


def test_gradients_and_update_decisions(client: TestClient) -> None:
    body = client.get("/api/runs/lang/gradients?iteration=0").json()
    assert set(body["episodes"]) == {"0", "1"}
    assert "one word" in str(body["aggregated"])
    assert client.get("/api/runs/lang/gradients?iteration=3").status_code == 404
    decisions = client.get("/api/runs/lang/updates").json()["decisions"]
    assert decisions and {d["agent_id"] for d in decisions} == {"researcher", "answerer"}
    assert all("accepted" in d and "reason" in d for d in decisions)
    only = client.get("/api/runs/lang/updates?iteration=1").json()["decisions"]
    assert only and all(d["iteration"] == 1 for d in only)


def test_language_views_of_another_kind_are_404_with_the_reason(client: TestClient) -> None:
    for route in ("policies", "policies/diff", "trajectories", "gradients", "updates"):
        response = client.get(f"/api/runs/weights~mag/{route}")
        assert response.status_code == 404, route
        assert "magrpo run" in response.json()["error"]
    assert client.get("/api/runs/nope/policies").status_code == 404
