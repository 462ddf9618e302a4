"""`langmarl train`, `langmarl eval`, `langmarl runs` against a real HTTP test server."""

import json
from pathlib import Path

import pytest
from trainer_fakes import QA_STUB_REPLY
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.testing.openai_stub import OpenAIStub


@pytest.mark.slow
def test_train_eval_runs(tmp_path: Path) -> None:
    runner = CliRunner()
    app = build_app()
    with OpenAIStub(responder=QA_STUB_REPLY) as stub:
        config = tmp_path / "c.json"
        config.write_text(
            json.dumps(
                {
                    "env": "language",
                    "exp_name": "cli",
                    "num_iterations": 1,
                    "trajectories_per_iteration": 2,
                    "llm": stub.llm_config(),
                    "seed": 0,
                    "runs_dir": str(tmp_path / "runs"),
                    "checkpoint_dir": str(tmp_path / "ck"),
                }
            )
        )
        result = runner.invoke(app, ["train", str(config), "--set", "num_iterations=2"])
        assert result.exit_code == 0, result.output
        assert "Training summary" in result.output and "Status: completed" in result.output
        assert "Reward:" in result.output and "Usage" in result.output
        assert "Validation score of the kept policies:" in result.output
        run = tmp_path / "runs" / "cli"
        assert json.loads((run / "run.json").read_text())["completed_iterations"] == 2
        assert (tmp_path / "ck" / "cli" / "answerer.txt").exists()

        result = runner.invoke(app, ["eval", str(run), "--split", "test"])
        assert result.exit_code == 0, result.output
        assert "initial (checkpoint 0)" in result.output and "95% interval" in result.output
        saved = json.loads((run / "evals" / "test_iter_0002.json").read_text())
        assert saved["split"] == "test" and saved["num_episodes"] >= 1
        assert saved["usage_by_role"]["actor"]["calls"] == 2 * saved["num_episodes"]

        result = runner.invoke(app, ["train", str(config), "--fresh"])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["runs", "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0 and "cli" in result.output and "completed" in result.output
    assert len(list((tmp_path / "runs").iterdir())) == 2


def test_eval_of_a_missing_run_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(build_app(), ["eval", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "nope' does not exist" in str(result.exception)
