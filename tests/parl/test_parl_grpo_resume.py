"""Weight-space PARL runs follow the run contract: listed by `langmarl runs`, checkpointed,
and resumed (in process and after SIGKILL) with no step lost or repeated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tiny_orchestrator import tiny_model

from langmarl.core.errors import ConfigError
from langmarl.envs.parallel.env import ParallelTasksEnv
from langmarl.magrpo.config import LoRAConfig
from langmarl.parl.curves import CURVES_FILE, curves_document
from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig
from langmarl.store.catalog import find_runs
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM, scripted_config

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
    second.load_checkpoint("latest")
    assert second.step == 2
    assert all(torch.equal(a, b) for a, b in zip(adapters, second.trainable, strict=True))
    metrics = second.train(resume_from="latest")
    assert [m["step"] for m in metrics] == [3]  # this attempt's steps
    assert [m["step"] for m in RunDir(run).metrics()] == [1, 2, 3]
    assert second.metrics == RunDir(run).metrics()  # the whole run, before the resume too
    record = RunDir(run).record()
    assert record.status == "completed" and record.attempts == 2 and record.kind == "parl_grpo"
    assert _episode_steps(run) == [1, 1, 2, 2, 3, 3]


def _episode_steps(run: Path) -> list[int]:
    return [e["step"] for e in json.loads(RunDir(run).file(CURVES_FILE).read_text())["episodes"]]


def test_a_killed_step_after_the_checkpoint_is_trained_once(tmp_path: Path) -> None:
    """A run killed after writing step 3's curves and metrics line but before its checkpoint
    resumes at step 3 with those dropped: no step is duplicated or missing."""
    run = tmp_path / "grpo"
    _trainer(run, 2).train()
    lines, document = RunDir(run).metrics(), json.loads(RunDir(run).file(CURVES_FILE).read_text())
    RunDir(run).append("metrics.jsonl", {**lines[-1], "step": 3, "total_reward": 99.0})
    killed = [{**e, "step": 3, "plan": "from the killed attempt"} for e in document["episodes"]]
    RunDir(run).write_json(CURVES_FILE, curves_document(document["episodes"] + killed))
    resumed = _trainer(run, 3)
    assert [m["step"] for m in resumed.train(resume_from="latest")] == [3]
    assert [m["step"] for m in RunDir(run).metrics()] == [1, 2, 3]
    assert RunDir(run).metrics()[-1]["total_reward"] != 99.0
    assert _episode_steps(run) == [1, 1, 2, 2, 3, 3]
    assert "from the killed attempt" not in RunDir(run).file(CURVES_FILE).read_text()
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["step-000003"]


def test_a_run_that_numbered_steps_from_zero_resumes_numbered_from_one(tmp_path: Path) -> None:
    """Runs written before the steps were numbered from 1 (metrics.jsonl, parl_curves.json
    and metrics.json from 0; checkpoints named by finished steps) are renumbered on resume."""
    run = tmp_path / "old"
    _trainer(run, 2).train()
    lines, document = RunDir(run).metrics(), json.loads(RunDir(run).file(CURVES_FILE).read_text())
    old = [{**line, "step": line["step"] - 1} for line in lines]
    old.append({**old[-1], "step": 2})  # a step killed before its checkpoint
    RunDir(run).write_text("metrics.jsonl", "".join(json.dumps(line) + "\n" for line in old))
    RunDir(run).write_json("metrics.json", old)
    rows = [{**e, "step": e["step"] - 1} for e in document["episodes"]]
    RunDir(run).write_json(CURVES_FILE, curves_document(rows))
    resumed = _trainer(run, 3)
    assert [m["step"] for m in resumed.train(resume_from="latest")] == [3]
    assert [m["step"] for m in RunDir(run).metrics()] == [1, 2, 3]
    assert _episode_steps(run) == [1, 1, 2, 2, 3, 3]
    assert not (run / "metrics.json").exists()


@pytest.mark.slow
def test_sigkill_then_resume_loses_and_repeats_no_step(
    tmp_path: Path, kill_then_resume_here
) -> None:
    """A training process SIGKILLed after its second step reads ``failed`` with how to resume;
    resumed (here, in the test's process: a fresh trainer that knows only the files, and one
    torch import fewer than a second process) it completes on attempt 2 with every step and
    every episode once."""
    run, steps = tmp_path / "killed", 4
    kill_then_resume_here(TARGET, run, steps)
    record = RunDir(run).record()
    assert record.status == "completed" and record.attempts == 2
    assert [m["step"] for m in RunDir(run).metrics()] == list(range(1, steps + 1))
    episodes = RunDir(run).file(CURVES_FILE).read_text()
    assert episodes.count('"plan_status"') == steps * 2  # two plans per step, none repeated
    assert not list(run.rglob(".*.tmp"))


def _write_earlier_layout(trainer: OrchestratorGRPO, run: Path, step: int) -> Path:
    """A checkpoint as ``langmarl.parl.grpo_checkpoint`` wrote them before the shared loop:
    model/, optimizer.pt, rng.pt and a state without the trainer's name."""
    target = run / "checkpoints" / f"step-{step:06d}"
    trainer.model.save_pretrained(target / "model")
    trainer.tokenizer.save_pretrained(target / "model")
    torch.save(trainer.agents[0].optimizer.state_dict(), target / "optimizer.pt")
    torch.save({"torch": torch.get_rng_state()}, target / "rng.pt")
    (target / "trainer_state.json").write_text(json.dumps({"step": step, "lora": True}))
    return target


def test_a_checkpoint_of_the_earlier_layout_resumes(tmp_path: Path) -> None:
    run = tmp_path / "old"
    writer = _trainer(run, 2)
    with torch.no_grad():
        for p in writer.trainable:
            p.add_(0.5)  # weights a fresh trainer does not have
    saved = [p.detach().clone() for p in writer.trainable]
    _write_earlier_layout(writer, run, 1)
    resumed = _trainer(run, 2)
    metrics = resumed.train(resume_from="latest")
    assert [m["step"] for m in metrics] == [2]  # step 1 is in the checkpoint
    assert RunDir(run).record().status == "completed"
    assert [p.name for p in (run / "checkpoints").iterdir()] == ["step-000002"]
    check = _trainer(run, 2)
    check.load_checkpoint("latest")  # the new layout, written by the resumed run
    assert check.step == 2 and (run / "checkpoints" / "step-000002" / "agent-0").is_dir()

    loaded = _trainer(tmp_path / "other", 2)
    loaded.load_checkpoint(_write_earlier_layout(writer, tmp_path / "copy", 1))
    assert loaded.step == 1
    assert all(torch.equal(a, b) for a, b in zip(saved, loaded.trainable, strict=True))


def test_a_checkpoint_of_the_earlier_layout_without_lora_is_refused(tmp_path: Path) -> None:
    target = _write_earlier_layout(_trainer(tmp_path / "a", 1), tmp_path / "a", 1)
    (target / "trainer_state.json").write_text(json.dumps({"step": 1, "lora": False}))
    with pytest.raises(ConfigError, match=r"without LoRA: resume with the same grpo\.lora"):
        _trainer(tmp_path / "a", 2).load_checkpoint("latest")


def test_a_checkpoint_of_the_earlier_layout_is_refused_on_ray(tmp_path: Path) -> None:
    """Its ``model/`` folder and loose ``optimizer.pt`` are read in process only; the check
    needs no Ray (a stand-in for the actors): the message says what to set."""
    from types import SimpleNamespace

    _write_earlier_layout(_trainer(tmp_path / "a", 1), tmp_path / "a", 1)
    on_ray = _trainer(tmp_path / "a", 2)
    on_ray.placement = SimpleNamespace(close=lambda: None)
    with pytest.raises(ConfigError, match=r"resumes in process only: .*placement='process'"):
        on_ray.load_checkpoint("latest")
