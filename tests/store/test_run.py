"""The run contract (`langmarl.store.run`): run.json, streams, status, rewind, schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError, RunFileError
from langmarl.core.secrets import Redactor
from langmarl.store.run import SCHEMA_VERSION, RunDir

SECRET = "sk-test-0123456789abcdef"


def test_start_writes_the_record_and_streams(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r", Redactor([SECRET]))
    info = run.start("magrpo", config={"key": SECRET, "lr": 0.1}, total_steps=3)
    assert info["schema_version"] == SCHEMA_VERSION and info["attempts"] == 1
    run.log_metrics(1, reward_mean=0.5, note=f"echo {SECRET}")
    with run.tracking():
        run.event("step", step=1)
    record = run.record()
    assert record.kind == "magrpo" and record.status == "completed" and record.error is None
    assert record.config == {"key": "[REDACTED]", "lr": 0.1}
    assert record.code["langmarl"] and len(record.code["git_commit"] or "0" * 40) == 40
    assert record.total_steps == 3  # type: ignore[attr-defined]  # a kind's extra field
    assert run.metrics() == [{"step": 1, "reward_mean": 0.5, "note": "echo [REDACTED]"}]
    assert [e["event"] for e in run.events()] == ["run_start", "step", "run_end"]
    assert SECRET not in "".join(p.read_text() for p in run.path.rglob("*") if p.is_file())
    assert run.start("magrpo")["attempts"] == 2  # a resume keeps created_at and the config
    assert run.record().config["lr"] == 0.1


@pytest.mark.parametrize(
    ("error", "status"), [(KeyboardInterrupt, "stopped"), (ValueError, "failed")]
)
def test_tracking_records_interrupts_and_failures(tmp_path: Path, error, status) -> None:
    run = RunDir(tmp_path / "r")
    run.start("parl_grpo")
    with pytest.raises(error), run.tracking():
        raise error("boom")
    record = run.record()
    assert record.status == status and record.error


def test_a_dead_running_process_reads_as_failed(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    run.start("iac")
    run.update(pid=2**22 + 12345, pid_started="1")
    record = run.record()
    assert record.status == "failed" and "--resume latest" in (record.error or "")
    assert run.read()["status"] == "running"  # the file is left as written


def test_end_cancelled_records_a_dead_running_run_only(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    assert not run.end_cancelled("cancelled on request")  # no run.json: nothing written
    run.start("p2p")
    assert not run.end_cancelled("cancelled on request")  # its process (this one) lives
    run.update(pid=2**22 + 12345, pid_started="1", outcome="running")
    with run.lock():  # a new attempt holds the run
        assert not RunDir(run.path).end_cancelled("cancelled on request")
    assert run.read()["status"] == "running"  # type: ignore[index]
    assert run.end_cancelled("cancelled on request")
    info = run.read()
    assert info is not None and (info["status"], info["error"], info["outcome"]) == (
        "cancelled", "cancelled on request", "cancelled",  # a session's own status too
    )  # fmt: skip
    assert run.events()[-1]["event"] == "run_end"
    assert not run.end_cancelled("again")  # it recorded how it ended: left alone


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("p2p_session", "langmarl p2p resume {path}"),
        ("magrpo", "langmarl magrpo train RUN_FILE --resume latest"),
        ("language", "same config and run id"),
        ("parl_grpo", "langmarl parl grpo --resume latest"),
    ],
)
def test_a_killed_run_says_how_its_kind_resumes(tmp_path: Path, kind: str, says: str) -> None:
    run = RunDir(tmp_path / "r")  # as `langmarl runs` and the dashboard open any run
    run.start(kind)
    run.update(pid=2**22 + 12345, pid_started="1")
    assert says.format(path=run.path) in (run.record().error or "")


def test_rewind_drops_the_steps_after_the_checkpoint(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    for step in (1, 2, 3, 4):
        run.log_metrics(step, x=step)
    with open(run.file("metrics.jsonl"), "a") as handle:
        handle.write('{"step": 5, "x"')  # torn by a kill
    assert run.rewind(2) == 2
    assert [m["step"] for m in run.metrics()] == [1, 2]
    run.log_metrics(3, x=3)
    assert [m["step"] for m in run.metrics()] == [1, 2, 3]


def test_a_newer_schema_is_refused_with_what_to_do(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "r")
    run.path.mkdir()
    run.file("run.json").write_text(json.dumps({"schema_version": 99, "kind": "magrpo"}))
    with pytest.raises(RunFileError, match="Upgrade langmarl"):
        run.record()
    with pytest.raises(ConfigError, match="not a langmarl run"):
        RunDir(tmp_path / "none").record()
