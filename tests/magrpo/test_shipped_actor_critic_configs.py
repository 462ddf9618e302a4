"""The shipped IAC/MAAC configs run for real (issue 42, item 7): ``langmarl magrpo train`` on
each file with the embedded SmolLM2 agents, cut to one step and a few tokens, ends
``completed`` with the algorithm and update schedule the file names; ``maac.json`` also scores
one held-out example before and after (the same greedy pass for every kind, so once).

Trained here: ``maac.json`` (the centralized q-critic, one update per episode). Trained in
test_named_transition.py: ``iac_online.json`` (the per-agent critics, one update per turn), with
a named transition. ``maac_online.json`` is validated but not trained for real: its step is
the MAAC critic (``MAACTrainer._critic_groups``) under the per-turn update
(``IACTrainer._turn_step``), two parts that do not depend on each other, each trained by one
of those runs; the combination is trained on tiny models in test_actor_critic_online.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app

SHIPPED = Path(__file__).parents[2] / "configs" / "magrpo"
CONFIGS = [("iac_online.json", "iac"), ("maac_online.json", "maac"), ("maac.json", "maac")]


@pytest.mark.parametrize(("name", "algorithm"), CONFIGS)
def test_the_shipped_config_validates(name: str, algorithm: str) -> None:
    result = CliRunner().invoke(build_app(), ["magrpo", "train", str(SHIPPED / name), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"{algorithm} on task writing: 2 agents, 2 turn(s)")
    online = json.loads((SHIPPED / name).read_text())["trainer"].get("update_every") == "turn"
    assert online == name.endswith("_online.json")


@pytest.mark.slow
def test_the_shipped_maac_config_trains_a_step_and_scores_heldout(tmp_path: Path) -> None:
    settings = {"runs_dir": str(tmp_path), "run_id": "run", "trainer.max_steps": "1",
                "trainer.max_new_tokens": "4", "task.num_eval": "1"}  # fmt: skip
    overrides = [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]
    args = ["magrpo", "train", str(SHIPPED / "maac.json"), "--no-plot", *overrides]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (run["kind"], run["status"]) == ("maac", "completed")
    [metrics] = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").open()]
    assert metrics["step"] == 1 and metrics["updates"] == 1
    report = json.loads((tmp_path / "run" / "heldout.json").read_text())
    assert report["before"]["interval"]["n"] == report["after"]["interval"]["n"] == 1
    assert report["after"]["label"] == "step 1"
