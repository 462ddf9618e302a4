"""`/api/runs/{id}/files/...`: a run's files and listings, and nothing outside the run."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from langmarl.web import create_app


def test_listing_and_files(client: TestClient) -> None:
    names = {e["name"] for e in client.get("/api/runs/lang/files").json()["entries"]}
    assert {"run.json", "metrics.jsonl", "policies", "logs"} <= names
    assert ".lock" not in names
    policies = client.get("/api/runs/lang/files/policies/iter_0002").json()["entries"]
    assert "manifest.json" in {e["name"] for e in policies}
    record = client.get("/api/runs/lang/files/run.json")
    assert record.status_code == 200 and json.loads(record.content)["kind"] == "language"
    missing = client.get("/api/runs/lang/files/nope.txt")
    assert missing.status_code == 404 and "nope.txt" in missing.json()["error"]


def test_traversal_and_absolute_paths_are_refused(client: TestClient) -> None:
    for path in ("..%2F..%2Fetc%2Fpasswd", "policies%2F..%2F..%2Fsession%2Frun.json",
                 "%2Fetc%2Fpasswd", "/etc/passwd", "..%5Crun.json"):  # fmt: skip
        response = client.get(f"/api/runs/lang/files/{path}")
        assert response.status_code == 400, (path, response.text)
        assert response.json()["fix"].startswith("pass a path relative to the run")


def test_hidden_files_and_locks_are_refused(client: TestClient) -> None:
    response = client.get("/api/runs/lang/files/.lock")
    assert response.status_code == 403 and "hidden" in response.json()["error"]
    assert client.get("/api/runs/weights~mag/files/checkpoints/.step-000006.tmp").status_code == 403


def test_symlinks_out_of_the_run_are_refused(own_runs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the dashboard")
    run = own_runs / "mag"
    (run / "out.txt").symlink_to(outside)
    (run / "other_run").symlink_to(own_runs / "group" / "grpo")
    (run / "inside.txt").symlink_to(run / "run.json")
    (run / "broken.txt").symlink_to(run / "gone.txt")
    client = TestClient(create_app(own_runs))
    for path in ("out.txt", "other_run/run.json"):
        response = client.get(f"/api/runs/mag/files/{path}")
        assert response.status_code == 403, path
        assert "link out of the run" in response.json()["error"]
        assert "not for the dashboard" not in response.text
    assert client.get("/api/runs/mag/files/inside.txt").json()["kind"] == "magrpo"
    assert client.get("/api/runs/mag/files/broken.txt").status_code == 404


def test_a_run_directory_linked_from_outside_serves_nothing(own_runs: Path, tmp_path: Path) -> None:
    elsewhere = own_runs.parent / "elsewhere"
    (own_runs / "mag").rename(elsewhere)
    (own_runs / "linked").symlink_to(elsewhere)
    client = TestClient(create_app(own_runs))
    response = client.get("/api/runs/linked/files/run.json")
    assert response.status_code == 403


def test_text_files_are_scrubbed_again_on_the_way_out(
    own_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "sk-live-abcdef123456")
    (own_runs / "mag" / "tool.log").write_text("started with sk-live-abcdef123456\n")
    client = TestClient(create_app(own_runs))
    response = client.get("/api/runs/mag/files/tool.log")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/")
    assert response.text == "started with [REDACTED]\n"


def test_files_a_confined_run_could_write_run_no_script_here(own_runs: Path) -> None:
    """Stored XSS: PPO code writes into its run dir; HTML and SVG must not render on the
    dashboard's origin, and nothing may be sniffed into something that runs (issue 26, 11)."""
    from langmarl.testing.asgi import live_server

    run = own_runs / "mag"
    script = "<script>fetch('/api/runs', {method: 'DELETE'})</script>"
    (run / "page.html").write_text(f"<html>{script}</html>")
    (run / "chart.svg").write_text(f'<svg xmlns="http://www.w3.org/2000/svg">{script}</svg>')
    (run / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64)
    (run / "notes.txt").write_text(f"<html>{script}</html>")  # text that looks like HTML
    with live_server(create_app(own_runs)) as url:
        for name in ("page.html", "chart.svg"):
            response = httpx.get(f"{url}/api/runs/mag/files/{name}")
            assert response.status_code == 200, name
            assert response.headers["content-type"] == "application/octet-stream", name
            assert response.headers["content-disposition"].startswith("attachment"), name
        shown = {n: httpx.get(f"{url}/api/runs/mag/files/{n}") for n in ("clip.mp4", "notes.txt")}
        assert shown["clip.mp4"].headers["content-type"] == "video/mp4"
        assert shown["clip.mp4"].headers["content-disposition"].startswith("inline")
        assert shown["notes.txt"].headers["content-type"].startswith("text/plain")
        for response in [*shown.values(), httpx.get(f"{url}/api/runs/mag/files/page.html")]:
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["content-security-policy"] == "sandbox"
