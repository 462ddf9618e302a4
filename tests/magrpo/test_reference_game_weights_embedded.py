"""The reference game on the embedded model in weight space: one tiny training step from the
run file through the CLI (the speaker trained, the embedded model ranking as the listener),
with the held-out line before and after."""

import json

import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.slow


def test_cli_trains_one_reference_step_and_reports_heldout(tmp_path) -> None:
    from langmarl.cli import build_app

    run_dir = tmp_path / "reference"
    settings = {
        "task.num_eval": "2",
        "task.num_train": "1",
        "runs_dir": str(run_dir.parent),
        "run_id": run_dir.name,
        "trainer.max_steps": "1",
        "trainer.num_generations": "2",
        "trainer.max_new_tokens": "2",
        "trainer.num_threads": "1",
    }
    overrides = [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]
    args = ["magrpo", "train", "configs/magrpo/reference_close.json", *overrides]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("Held-out reward: ")
    assert "(n=2 reference_close examples, greedy; 95% CI" in lines[-1]
    report = json.loads((run_dir / "heldout.json").read_text(encoding="utf-8"))
    assert report["before"]["interval"]["n"] == report["after"]["interval"]["n"] == 2
    assert all(value in (0.0, 1.0) for value in report["after"]["returns"])
    metrics = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    step = next(m for m in metrics if m.get("step") == 1 and "leaves" in m)
    assert step["leaves"] == 2  # one speaker, G=2, one turn
