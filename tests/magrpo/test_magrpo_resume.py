"""MAGRPO runs follow the run contract: listed by `langmarl runs`, truthful status, and a
SIGKILLed run resumes from its newest checkpoint with no step lost or repeated."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.errors import ConfigError
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.trainer import MAGRPOTrainer
from langmarl.store.catalog import find_runs
from langmarl.store.run import RunDir

TARGET = Path(__file__).with_name("magrpo_kill_target.py")
DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def _trainer(tiny_models, run_dir: Path, reward=None, **overrides) -> MAGRPOTrainer:
    models, tokenizers = tiny_models
    settings = {"output_dir": str(run_dir), "num_generations": 2, "max_new_tokens": 4,
                "max_steps": 2, "use_chat_template": False, **overrides}  # fmt: skip
    return MAGRPOTrainer(
        models, reward or (lambda samples: [0.5] * len(samples)), MAGRPOConfig(**settings),
        tokenizers=tokenizers, train_dataset=DATA,
    )  # fmt: skip


def test_a_tiny_run_is_listed_with_its_metrics(tiny_models, tmp_path: Path) -> None:
    _trainer(tiny_models, tmp_path / "runs" / "tiny").train()
    record = RunDir(tmp_path / "runs" / "tiny").record()
    assert record.kind == "magrpo" and record.status == "completed" and record.attempts == 1
    assert record.config["algorithm"] == "magrpo" and record.total_steps == 2  # type: ignore[attr-defined]
    assert [m["step"] for m in RunDir(tmp_path / "runs" / "tiny").metrics()] == [1, 2]
    [summary] = find_runs(tmp_path)
    assert (summary.kind, summary.status, summary.progress) == ("magrpo", "completed", "2/2 steps")
    result = CliRunner().invoke(build_app(), ["runs", "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0 and "tiny" in result.output and "magrpo" in result.output
    shown = CliRunner().invoke(build_app(), ["runs", "show", str(tmp_path / "runs" / "tiny")])
    assert shown.exit_code == 0 and "step-000002" in shown.output, shown.output


@pytest.mark.parametrize(
    ("error", "status"), [(KeyboardInterrupt, "stopped"), (RuntimeError, "failed")]
)
def test_status_is_truthful_on_errors(tiny_models, tmp_path: Path, error, status) -> None:
    def reward(samples):
        raise error("reward broke")

    with pytest.raises(error):
        _trainer(tiny_models, tmp_path / "r", reward).train()
    record = RunDir(tmp_path / "r").record()
    assert record.status == status
    assert record.error == ("interrupted" if status == "stopped" else "RuntimeError: reward broke")


@pytest.mark.slow
def test_sigkill_then_resume_loses_and_repeats_no_step(
    tmp_path: Path, kill_then_resume_here
) -> None:
    """A training process SIGKILLed after its second step reads ``failed`` with how to resume;
    resumed (here, in the test's process: a fresh trainer that knows only the files, and one
    torch import fewer than a second process) it completes on attempt 2 with every step once."""
    run, steps = tmp_path / "killed", 5
    kill_then_resume_here(TARGET, run, steps)
    record = RunDir(run).record()
    assert record.status == "completed" and record.attempts == 2
    assert [m["step"] for m in RunDir(run).metrics()] == list(range(1, steps + 1))
    events = [e["event"] for e in RunDir(run).events()]
    assert events.count("run_start") == 2 and events[-1] == "run_end"
    assert not list(run.rglob(".*.tmp"))


def test_a_run_of_the_old_layout_resumes_into_the_contract(tiny_models, tmp_path: Path) -> None:
    run = tmp_path / "old"
    _trainer(tiny_models, run, save_steps=1).train()
    config = RunDir(run).record().config  # the layout before the run contract: config.json,
    (run / "config.json").write_text(json.dumps(config))  # no run.json, no events
    (run / "run.json").unlink()
    (run / "logs" / "events.jsonl").unlink()
    assert find_runs(tmp_path)[0].layout == "old"
    with pytest.raises(ConfigError, match="already holds a run"):
        _trainer(tiny_models, run, max_steps=3).train()
    _trainer(tiny_models, run, max_steps=3, num_train_epochs=2, save_steps=1).train("latest")
    record = RunDir(run).record()
    assert (record.status, record.attempts, record.schema_version) == ("completed", 1, 1)
    assert [m["step"] for m in RunDir(run).metrics()] == [1, 2, 3]


def test_resume_latest_before_the_first_checkpoint_starts_over(tiny_models, tmp_path) -> None:
    """A run killed before its first checkpoint (a retried job) continues with `--resume
    latest` from step 0: its metrics lines are dropped and trained again, none twice."""
    run = tmp_path / "early"
    _trainer(tiny_models, run, save_steps=1).train()
    shutil.rmtree(run / "checkpoints")  # killed after logging, before any checkpoint
    with pytest.raises(ConfigError, match="already holds a run"):
        _trainer(tiny_models, run).train()
    _trainer(tiny_models, run, save_steps=1).train("latest")
    assert [m["step"] for m in RunDir(run).metrics()] == [1, 2]
    assert RunDir(run).record().attempts == 2
