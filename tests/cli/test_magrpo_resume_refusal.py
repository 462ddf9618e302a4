"""``magrpo train --resume`` without a checkpoint is refused before the agents' models load
(it used to load them, then say there was nothing to resume from)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import langmarl.magrpo.run as magrpo_run
from langmarl.cli import build_app


def test_resume_without_a_checkpoint_is_refused_before_the_models_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_models(run):
        raise AssertionError("the models were loaded before the resume was checked")

    monkeypatch.setattr(magrpo_run, "build_magrpo_trainer", no_models)
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"runs_dir": str(tmp_path), "run_id": "run", "trainer": {}}))
    result = CliRunner().invoke(
        build_app(), ["magrpo", "train", str(config), "--resume", "latest", "--no-plot"]
    )
    assert result.exit_code != 0
    assert "no checkpoint to resume from at 'latest'" in str(result.exception)
