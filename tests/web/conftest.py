"""Fixtures of the API tests: a runs directory with a run of every kind (see
:mod:`web_fixtures`), a client over it, and a fresh runs directory to change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from web_fixtures import grpo_run, language_run, magrpo_run, session_run

from langmarl.web import create_app


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One runs directory with a run of every kind (built once: the language run trains)."""
    root = tmp_path_factory.mktemp("runs") / "runs"
    language_run(root)
    magrpo_run(root / "weights" / "mag")
    grpo_run(root / "grpo")
    session_run(root / "session")
    session_run(root / "bench_1" / "case_session")
    bench = {"cases": [{"case": {"env_id": "InvertedPendulum-v5", "instruction": "balance"},
                        "session_id": "case_session", "status": "passed", "best_score": 0.9}],
             "summary": {"all": {"cases": 1, "success_rate": 1.0, "mean_score": 0.9}}}  # fmt: skip
    (root / "bench_1" / "bench.json").write_text(json.dumps(bench))
    return root


@pytest.fixture
def client(runs_dir: Path) -> TestClient:
    """A client of the API over the shared runs directory (read-only tests)."""
    return TestClient(create_app(runs_dir))


@pytest.fixture
def own_runs(tmp_path: Path) -> Path:
    """A fresh runs directory for tests that change runs (metadata, trash)."""
    root = tmp_path / "runs"
    magrpo_run(root / "mag")
    grpo_run(root / "group" / "grpo")
    return root
