"""Weight-space PARL runs follow the run contract: listed by `langmarl runs`, checkpointed,
and resumed (in process and after SIGKILL) with no step lost or repeated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tiny_orchestrator import tiny_model

from langmarl.core.errors import ConfigError
from langmarl.envs.parallel.env import ParallelTasksEnv
from langmarl.magrpo.config import LoRAConfig
from langmarl.parl.curves import CURVES_FILE
from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig
from langmarl.store.catalog import find_runs
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.testing.processes import kill_after_metric_lines

TARGET = Path(__file__).with_name("parl_grpo_kill_target.py")


def _trainer(output_dir: Path, num_steps: int) -> OrchestratorGRPO:
    model, tokenizer = tiny_model()
    subagents = ScriptedLLM(lambda r: "ANSWER: 3", config=scripted_config(max_retries=0))
    env = ParallelTasksEnv(num_tasks=2, subagent_llm=subagents, max_subagent_steps=1,
                           combine="join", plan_fallback="single")  # fmt: skip
    config = OrchestratorGRPOConfig(
        num_steps=num_steps, num_generations=2, max_new_tokens=6, learning_rate=1e-2,
        lora=LoRAConfig(r=2, alpha=4), output_dir=str(output_dir), num_threads=1,
    )  # fmt: skip
    return OrchestratorGRPO(env, config, model=model, tokenizer=tokenizer)


def test_checkpoint_resume_and_listing(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "grpo"
    first = _trainer(run, 2)
    first.train()
    adapters = [p.detach().clone() for p in first.trainable]
    [summary] = find_runs(tmp_path)
    assert (summary.kind, summary.status, summary.progress) == (
        "parl_grpo",
        "completed",
        "2/2 steps",
    )
    assert [p.name for p in (run / "checkpoints").iterdir()] == ["step-000002"]
    with pytest.raises(ConfigError, match="already holds a run"):
        _trainer(run, 3).train()
    second = _trainer(run, 3)
    second.resume("latest")
    assert second.completed_steps == 2
    assert all(torch.equal(a, b) for a, b in zip(adapters, second.trainable, strict=True))
    metrics = second.train(resume_from="latest")
    assert [m["step"] for m in metrics] == [0, 1, 2]
    assert [m["step"] for m in RunDir(run).metrics()] == [0, 1, 2]
    record = RunDir(run).record()
    assert record.status == "completed" and record.attempts == 2 and record.kind == "parl_grpo"
    episodes = RunDir(run).file(CURVES_FILE).read_text()
    assert episodes.count('"plan_status"') == 3 * 2


@pytest.mark.slow
def test_sigkill_then_resume_loses_and_repeats_no_step(tmp_path: Path) -> None:
    run, steps = tmp_path / "killed", 7
    command = [sys.executable, str(TARGET), str(run), str(steps), "0.3"]
    for kill_after in (2, 4):
        kill_after_metric_lines(command, run, kill_after)
        record = RunDir(run).record()
        assert record.status == "failed" and "--resume latest" in (record.error or "")
    final = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr[-2000:]
    record = RunDir(run).record()
    assert record.status == "completed" and record.attempts == 3
    assert [m["step"] for m in RunDir(run).metrics()] == list(range(steps))
    episodes = RunDir(run).file(CURVES_FILE).read_text()
    assert episodes.count('"plan_status"') == steps * 2  # two plans per step, none repeated
    assert not list(run.rglob(".*.tmp"))
