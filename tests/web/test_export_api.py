"""`/api/runs/{id}/export` (a run's metrics as CSV/JSONL, its files as a zip) and
`/api/compare` (config diff, series summaries), through a real server with a token, and the
reward's LaTeX as MathML in an iteration's detail."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from web_fixtures import grpo_run, magrpo_run

from langmarl.store.run import RunDir
from langmarl.testing.asgi import live_server
from langmarl.web import create_app

TOKEN = "export-token-5678"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRET = "sk-export-secret-0042"


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """(URL, runs dir) of a real server with a token over a MAGRPO run (with a checkpoint and
    a log holding an environment secret), a nested GRPO run and a second MAGRPO run."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    root = tmp_path / "runs"
    mag = magrpo_run(root / "mag")
    (mag / "logs" / "tool.log").write_text(f"called with {SECRET}\n")
    grpo_run(root / "group" / "grpo")
    other = RunDir(root / "mag2")
    other.start("magrpo", config={"algorithm": "magrpo", "lr": 0.2, "llm": {"api_key": "sk-a"}},
                total_steps=2)  # fmt: skip
    other.log_metrics(1, reward_mean=0.1, loss=2.0), other.log_metrics(2, reward_mean=0.3, loss=1.0)
    other.finish("completed")
    with live_server(create_app(root, token=TOKEN)) as url:
        yield url, root


def test_metrics_download_as_csv_and_jsonl(server: tuple[str, Path]) -> None:
    url, root = server
    assert httpx.get(f"{url}/api/runs/mag/export?format=csv").status_code == 401
    response = httpx.get(f"{url}/api/runs/mag/export?format=csv", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.headers["content-disposition"] == 'attachment; filename="mag-metrics.csv"'
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == ["step", "loss", "reward_mean"]
    assert [row[0] for row in rows[1:]] == ["1", "2", "3", "4"] and rows[4][2] == "1.0"

    response = httpx.get(f"{url}/api/runs/group~grpo/export?format=jsonl", headers=AUTH)
    assert response.headers["content-type"] == "application/x-ndjson"
    assert 'filename="group_grpo-metrics.jsonl"' in response.headers["content-disposition"]
    written = (root / "group" / "grpo" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in response.text.splitlines()] == [
        json.loads(line) for line in written
    ]


def test_the_files_download_as_a_zip_without_checkpoints_or_secrets(
    server: tuple[str, Path],
) -> None:
    url, _ = server
    response = httpx.get(f"{url}/api/runs/mag/export?format=zip", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    assert response.headers["content-disposition"] == 'attachment; filename="mag.zip"'
    assert int(response.headers["content-length"]) == len(response.content)
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = set(archive.namelist())
    assert {"mag/run.json", "mag/metrics.jsonl", "mag/heldout.json", "mag/logs/tool.log"} <= names
    assert not [n for n in names if "checkpoints" in n or "/." in n], names
    assert archive.read("mag/logs/tool.log").decode() == "called with [REDACTED]\n"
    assert SECRET.encode() not in response.content
    assert json.loads(archive.read("mag/run.json"))["kind"] == "magrpo"


def test_a_wrong_format_or_run_is_an_error_that_says_what_to_send(
    server: tuple[str, Path],
) -> None:
    url, _ = server
    wrong = httpx.get(f"{url}/api/runs/mag/export?format=xlsx", headers=AUTH)
    assert wrong.status_code == 400 and "'csv', 'jsonl' or 'zip'" in wrong.json()["error"]
    assert httpx.get(f"{url}/api/runs/nope/export", headers=AUTH).status_code == 404


def test_compare_answers_the_config_diff_and_the_shared_series(server: tuple[str, Path]) -> None:
    url, _ = server
    assert httpx.get(f"{url}/api/compare?runs=mag,mag2").status_code == 401
    body = httpx.get(f"{url}/api/compare?runs=mag,mag2", headers=AUTH).json()
    assert [run["run_id"] for run in body["runs"]] == ["mag", "mag2"]
    diff = {row["key"]: row["values"] for row in body["config_diff"]}
    assert diff["lr"] == ["—", "0.2"]
    assert diff["llm.api_key"] == ["—", "[REDACTED]"]  # a secret's value never shown
    assert diff["api_key"] == ["[REDACTED]", "—"]
    assert "algorithm" not in diff  # the same in both
    assert body["series"]["reward_mean"] == [
        {"last": 1.0, "low": 0.25, "high": 1.0, "points": 4},
        {"last": 0.3, "low": 0.1, "high": 0.3, "points": 2},
    ]
    one = httpx.get(f"{url}/api/compare?runs=mag", headers=AUTH)
    assert one.status_code == 400 and "?runs=<id>,<id>" in one.json()["fix"]
    assert httpx.get(f"{url}/api/compare?runs=mag,nope", headers=AUTH).status_code == 404


def test_an_iterations_latex_comes_as_mathml(client: TestClient) -> None:
    body = client.get("/api/runs/session/iterations/iter_1").json()
    mathml = body["reward_mathml"]
    assert mathml.startswith("<math ") and 'xmlns="http://www.w3.org/1998/Math/MathML"' in mathml
    assert "<mi>θ</mi>" in mathml and body["reward_spec"]["latex"] == r"r = 1 - |\theta|"
