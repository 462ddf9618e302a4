"""LocalStore: atomic files, secret scrubbing, truthful run status."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.store import LocalStore


def test_json_round_trip_and_no_temp_files_left(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.write_json("run", "a/b.json", {"x": 1})
    assert store.read_json("run", "a/b.json") == {"x": 1}
    assert store.read_json("run", "missing.json", default=[]) == []
    assert [p.name for p in (tmp_path / "run" / "a").iterdir()] == ["b.json"]


def test_secrets_are_scrubbed_from_every_write(tmp_path: Path) -> None:
    secret = "sk-test-0123456789abcdef"
    store = LocalStore(tmp_path, secrets={secret})
    store.write_json("run", "x.json", {"note": f"key={secret}"})
    store.append_line("run", "log.txt", f"using {secret}")
    store.append_event("run", "e.jsonl", {"msg": secret})
    text = "".join(p.read_text() for p in (tmp_path / "run").rglob("*") if p.is_file())
    assert secret not in text
    assert "[REDACTED]" in text


def test_run_ids_cannot_escape_the_base_dir(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Invalid run id"):
        LocalStore(tmp_path).run_dir("../evil")


def test_status_of_a_dead_running_run_reads_failed(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.start_run("r1", env="language")
    assert store.run_info("r1")["status"] == "running"  # this process is alive
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    store.update_run("r1", pid=int(dead.stdout))
    info = store.run_info("r1")
    assert info["status"] == "failed"
    assert "resume" in info["error"]
    # on disk the recorded status is unchanged; resuming makes it running again
    assert json.loads((tmp_path / "r1" / "run.json").read_text())["status"] == "running"
    assert store.start_run("r1")["attempts"] == 2


def test_list_runs_and_set_status(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.start_run("a")
    store.set_status("a", "completed")
    store.start_run("b")
    store.set_status("b", "stopped", error="early stopping")
    runs = {r["run_id"]: r for r in store.list_runs()}
    assert runs["a"]["status"] == "completed"
    assert runs["b"]["error"] == "early stopping"
    with pytest.raises(ConfigError, match="No run"):
        store.run_info("zzz")
