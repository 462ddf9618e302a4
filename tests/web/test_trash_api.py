"""Metadata (alias, star, tags) and the trash: soft delete, restore, purge; a running run
cannot be deleted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
from fastapi.testclient import TestClient
from web_fixtures import session_run

from langmarl.store.run import RunDir
from langmarl.web import create_app


def test_metadata_is_merged_into_metadata_json_and_filters_the_list(own_runs: Path) -> None:
    session_run(own_runs / "session")
    client = TestClient(create_app(own_runs))
    patch = {"alias": " pole ", "starred": True, "tags": ["a", "a", " "]}
    response = client.patch("/api/runs/session/metadata", json=patch)
    assert response.json() == {"alias": "pole", "starred": True, "tags": ["a"]}
    stored = json.loads((own_runs / "session" / "metadata.json").read_text())
    assert stored["prompt"] == "balance the pole" and stored["tags"] == ["a"]  # session's kept
    client.patch("/api/runs/group~grpo/metadata", json={"tags": ["b"]})
    assert [r["run_id"] for r in client.get("/api/runs?starred=true").json()["runs"]] == ["session"]
    assert [r["run_id"] for r in client.get("/api/runs?tag=b").json()["runs"]] == ["group~grpo"]
    assert [r["run_id"] for r in client.get("/api/runs?text=pole").json()["runs"]] == ["session"]
    cleared = client.patch("/api/runs/session/metadata", json={"alias": "", "starred": False})
    assert cleared.json() == {"alias": None, "starred": False, "tags": ["a"]}


def test_bad_metadata_is_422_naming_the_field(own_runs: Path) -> None:
    client = TestClient(create_app(own_runs))
    response = client.patch("/api/runs/mag/metadata", json={"starred": "maybe"})
    assert response.status_code == 422 and "'starred'" in response.json()["error"]
    response = client.patch("/api/runs/mag/metadata", json={"colour": "red"})
    assert response.status_code == 422 and "'colour'" in response.json()["error"]
    assert client.patch("/api/runs/nope/metadata", json={}).status_code == 404


def test_delete_restore_purge(own_runs: Path) -> None:
    client = TestClient(create_app(own_runs))
    note = client.delete("/api/runs/group~grpo").json()
    assert (note["trash_id"], note["original"]) == ("group~grpo", "group/grpo")
    assert not (own_runs / "group" / "grpo").exists()
    assert [r["run_id"] for r in client.get("/api/runs").json()["runs"]] == ["mag"]
    assert client.get("/api/runs/group~grpo").status_code == 404
    [item] = client.get("/api/trash").json()
    assert item["kind"] == "parl_grpo"
    restored = client.post("/api/trash/group~grpo/restore").json()
    assert restored["run_id"] == "group~grpo" and client.get("/api/trash").json() == []
    assert client.get("/api/runs/group~grpo").json()["run"]["kind"] == "parl_grpo"
    client.delete("/api/runs/mag")
    assert client.delete("/api/trash/mag").json()["original"] == "mag"
    assert client.get("/api/trash").json() == [] and not (own_runs / ".trash" / "mag").exists()


def test_trash_errors(own_runs: Path) -> None:
    client = TestClient(create_app(own_runs))
    assert client.post("/api/trash/nope/restore").status_code == 404
    assert client.delete("/api/trash/nope").status_code == 404
    client.delete("/api/runs/mag")
    (own_runs / "mag").mkdir()  # something took its place
    response = client.post("/api/trash/mag/restore")
    assert response.status_code == 409 and "move or delete" in response.json()["fix"]
    assert client.delete("/api/runs/nope").status_code == 404


def test_a_running_run_is_not_deleted(own_runs: Path) -> None:
    run = RunDir(own_runs / "live")
    run.start("magrpo")  # this test's process: alive
    assert run.record().pid == os.getpid()
    client = TestClient(create_app(own_runs))
    response = client.delete("/api/runs/live")
    assert response.status_code == 409
    assert "still running" in response.json()["error"] and "stop it" in response.json()["fix"]
    assert (own_runs / "live" / "run.json").is_file()
    run.finish("stopped")
    assert client.delete("/api/runs/live").status_code == 200


def test_runs_behind_symlinks_are_not_listed_served_deleted_or_purged(
    own_runs: Path, tmp_path: Path
) -> None:
    """Issue 26, finding 4: a symlinked group directory led delete + purge to remove the real
    directory outside the runs root; a symlinked run was listed and its metrics served."""
    from langmarl.testing.asgi import live_server

    outside = tmp_path / "outside"
    outside.mkdir()
    (own_runs / "group" / "grpo").rename(outside / "grpo")
    (own_runs / "group").rmdir()
    (own_runs / "group").symlink_to(outside)  # a group directory linked out of the root
    (own_runs / "linked").symlink_to(outside / "grpo")  # a run linked out of the root
    (own_runs / ".trash").mkdir()
    (own_runs / ".trash" / "planted").symlink_to(outside)
    (own_runs / ".trash" / "planted.json").write_text('{"original": "planted"}')
    with live_server(create_app(own_runs)) as url:
        listed = [r["run_id"] for r in httpx.get(f"{url}/api/runs").json()["runs"]]
        assert listed == ["mag"]
        for run_id in ("group~grpo", "linked"):
            for response in (httpx.get(f"{url}/api/runs/{run_id}/metrics"),
                             httpx.delete(f"{url}/api/runs/{run_id}")):  # fmt: skip
                assert response.status_code == 403, (run_id, response.text)
                assert "symlink" in response.json()["error"] and response.json()["fix"]
        assert httpx.get(f"{url}/api/trash").json() == []
        purged = httpx.delete(f"{url}/api/trash/planted")
        assert purged.status_code == 404 and purged.json()["fix"]
    assert (outside / "grpo" / "run.json").is_file()  # nothing outside was touched
