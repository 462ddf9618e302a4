"""Language-space runs follow the run contract: run.json (kind language, config without
secrets, code version), metrics.jsonl keyed by step; listed and shown by `langmarl runs`."""

from __future__ import annotations

from pathlib import Path

from trainer_fakes import qa_team_reply
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.config import LanguageTaskConfig
from langmarl.envs.language.env import LanguageEnv
from langmarl.store.catalog import find_runs
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import MonteCarloTrainer


def test_a_tiny_language_run_is_a_run(tmp_path: Path) -> None:
    config = LanguageTaskConfig(
        exp_name="tiny", task_type="qa", num_iterations=2, trajectories_per_iteration=2,
        runs_dir=str(tmp_path / "experiments"), checkpoint_dir=str(tmp_path / "ck"),
        seed=3,
    )  # fmt: skip
    llm = ScriptedLLM(qa_team_reply, config=scripted_config(max_retries=0))
    env = LanguageEnv(config, llm=llm)
    MonteCarloTrainer(config, env, CentralizedCritic(config, llm=llm),
                      PolicyGradientOptimizer(scripted_config(), llm=llm)).train()  # fmt: skip
    run = RunDir(tmp_path / "experiments" / "tiny")
    record = run.record()
    assert (record.kind, record.status, record.schema_version) == ("language", "completed", 1)
    assert record.config["exp_name"] == "tiny" and record.code["langmarl"]
    assert [(m["step"], m["iteration"]) for m in run.metrics()] == [(1, 0), (2, 1)]
    events = [e["event"] for e in run.events()]
    assert events[0] == "run_start" and events[-1] == "run_end" and "iteration_end" in events
    [summary] = find_runs(tmp_path / "experiments")
    assert (summary.kind, summary.progress) == ("language", "2/2 iterations")
    shown = CliRunner().invoke(
        build_app(), ["runs", "show", "tiny", "--runs-dir", str(tmp_path / "experiments")]
    )
    assert shown.exit_code == 0, shown.output
    assert "researcher" in shown.output and "diff against checkpoint 0" in shown.output
