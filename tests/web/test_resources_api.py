"""``GET /api/resources/status``: the machine's cores, load, memory, disk and GPUs, as the
dashboard's resource monitor shows them; GPUs read through ``nvidia-smi`` when it is there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from langmarl.web import create_app

FAKE_SMI = """#!/bin/sh
echo "Fake GPU A, 1024, 16384, 37"
"""


def test_the_status_reads_the_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no nvidia-smi: no GPUs
    status = TestClient(create_app(tmp_path / "runs")).get("/api/resources/status").json()
    assert status["cpus"] == os.cpu_count() and 1 <= status["cpus_usable"] <= status["cpus"]
    assert len(status["load_average"]) == 3 and all(v >= 0 for v in status["load_average"])
    memory = status["memory"]
    assert 0 < memory["available"] <= memory["total"]
    assert 0 < status["disk"]["free"] <= status["disk"]["total"]  # the disk runs/ will be on
    assert status["gpus"] == []


def test_gpus_come_from_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{smi.parent}{os.pathsep}{os.environ['PATH']}")
    status = TestClient(create_app(tmp_path)).get("/api/resources/status").json()
    assert status["gpus"] == [{"name": "Fake GPU A", "memory_used_mib": 1024.0,
                               "memory_total_mib": 16384.0, "utilization_pct": 37.0}]  # fmt: skip
