"""W&B (offline) and Trackio (local database) runs hold what was logged, read back with
their own formats: W&B's protobuf records, Trackio's storage."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from langmarl.testing.processes import wait_until
from langmarl.tracking import make_trackers


def _log_two_steps(report_to: str, run_dir: Path) -> None:
    group = make_trackers(report_to, run_dir, "run-1", {"lr": 0.1, "llm": {"name": "local"}})
    group.log_record({"step": 0, "loss": 2.0, "reward": {"mean": 0.25}})
    group.log_record({"step": 5, "loss": 1.5, "reward": {"mean": 0.75}})
    group.close()


def _wandb_records(path: Path) -> list[Any]:
    """The records of a ``.wandb`` file: a 7-byte header, then LevelDB-style log records
    (crc32, length, type; FULL=1, FIRST=2, MIDDLE=3, LAST=4) in 32 KiB blocks."""
    from wandb.proto import wandb_internal_pb2

    data, block, pos, pending, records = path.read_bytes(), 32768, 7, b"", []
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        pending += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            records.append(record)
            pending = b""
    return records


def _key(item: Any) -> str:
    return str(item.key or "/".join(item.nested_key))


def test_wandb_offline_run_holds_the_history_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WANDB_SILENT", "true")
    _log_two_steps("wandb", tmp_path)
    (run_file,) = (tmp_path / "wandb").glob("offline-run-*/run-*.wandb")

    def read_history() -> list[tuple[dict[str, str], int]]:
        return [
            ({_key(item): item.value_json for item in r.history.item}, r.history.step.num)
            for r in _wandb_records(run_file)
            if r.WhichOneof("record_type") == "history"
        ]

    # W&B's service writes the file from its own process; on a loaded machine the last
    # records can land just after finish() returns (seen once in a full-suite run)
    wait_until(lambda: len(read_history()) >= 2, timeout_s=30, what="W&B's history records")
    records = _wandb_records(run_file)
    history = read_history()
    assert [(h["loss"], h["reward/mean"], step) for h, step in history] == [
        ("2", "0.25", 0),
        ("1.5", "0.75", 5),
    ]
    (run,) = [r.run for r in records if r.WhichOneof("record_type") == "run"]
    assert run.display_name == "run-1" and run.project == "langmarl"
    config = {
        _key(u): u.value_json
        for r in records
        if r.WhichOneof("record_type") == "config"
        for u in r.config.update
    }
    assert config["lr"] == "0.1" and json.loads(config["llm"]) == {"name": "local"}


def test_trackio_local_run_holds_the_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trackio import sqlite_storage, utils

    monkeypatch.setattr(utils, "TRACKIO_DIR", tmp_path)  # keep the test's runs out of ~/.cache
    monkeypatch.setattr(sqlite_storage, "TRACKIO_DIR", tmp_path)
    _log_two_steps("trackio", tmp_path)
    logs = sqlite_storage.SQLiteStorage.get_logs("langmarl", "run-1")
    assert [(log["step"], log["loss"], log["reward/mean"]) for log in logs] == [
        (0, 2.0, 0.25),
        (5, 1.5, 0.75),
    ]
    config = sqlite_storage.SQLiteStorage.get_run_config("langmarl", "run-1") or {}
    assert config["lr"] == 0.1 and config["llm/name"] == "local"
