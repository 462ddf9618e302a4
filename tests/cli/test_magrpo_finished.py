"""Rerunning a finished `magrpo train` says it is finished, and what to do instead."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.store.run import RunDir


def finished_run(tmp_path: Path, max_steps: int = 4) -> Path:
    output = tmp_path / "run"
    config = tmp_path / "run.json"
    settings = {"runs_dir": str(tmp_path), "run_id": "run", "trainer": {"max_steps": 4}}
    config.write_text(json.dumps(settings))
    run = RunDir(output)
    run.start("magrpo", config={"max_steps": max_steps, "num_train_epochs": 1}, total_steps=4)
    run.update(step=4)
    run.finish("completed")
    return config


def train(*args: str):
    return CliRunner().invoke(build_app(), ["magrpo", "train", *args, "--no-plot"])


def test_a_rerun_is_refused_as_finished(tmp_path: Path) -> None:
    result = train(str(finished_run(tmp_path)))
    assert result.exit_code != 0
    message = str(result.exception)
    assert "holds a finished run (completed at step 4 of 4)" in message
    assert "--set run_id=<new name>" in message


def test_resume_of_a_finished_run_says_there_is_nothing_left(tmp_path: Path) -> None:
    result = train(str(finished_run(tmp_path)), "--resume", "latest")
    assert result.exit_code == 0, result.output
    assert "Nothing to resume:" in result.output and "step 4 of 4" in result.output


def test_resume_with_a_raised_budget_is_not_finished(tmp_path: Path) -> None:
    config = finished_run(tmp_path, max_steps=2)  # the run was trained with a smaller budget
    result = train(str(config), "--resume", "latest")
    assert "Nothing to resume" not in result.output  # it goes on to resume, and here finds
    assert "no checkpoint to resume from" in str(result.exception)  # no checkpoint to load
