"""Weight-space PARL with a tiny random model and scripted sub-agents: one GRPO step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from tiny_orchestrator import tiny_model

from langmarl.core.errors import LLMError
from langmarl.envs.parallel.env import ParallelTasksEnv
from langmarl.llm.types import ChatRequest
from langmarl.parl.curves import CURVES_FILE
from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM, scripted_config


def _flaky_subagents() -> Any:
    """Every third sub-agent call fails, so plans of one group get different rewards."""
    calls = iter(range(10_000))

    def reply(request: ChatRequest) -> str | BaseException:
        if next(calls) % 3 == 2:
            return LLMError("scripted", "scripted", "busy")
        return "ANSWER: 3"

    return ScriptedLLM(reply, config=scripted_config(max_retries=0))


def test_grpo_step_updates_the_orchestrator_and_records_curves(tmp_path: Path) -> None:
    model, tokenizer = tiny_model()
    env = ParallelTasksEnv(num_tasks=2, subagent_llm=_flaky_subagents(), max_subagent_steps=1)
    config = OrchestratorGRPOConfig(
        num_steps=2, num_generations=3, max_new_tokens=8, learning_rate=1e-2,
        output_dir=str(tmp_path), num_threads=1, save_model=True,
    )  # fmt: skip
    trainer = OrchestratorGRPO(env, config, model=model, tokenizer=tokenizer)
    before = [p.detach().clone() for p in model.parameters()]
    metrics = trainer.train()
    assert [m["step"] for m in metrics] == [1, 2]  # numbered as every weight-space run
    assert all(torch.isfinite(torch.tensor(m["loss"])) for m in metrics)
    # the first step trains with the initial λ
    assert [m["lambda1"] for m in metrics] == pytest.approx([0.1, 0.05])
    # random plans fall back to one sub-agent per task part: real sub-agents, real traces
    assert all(m["num_subagents"] >= 1 and m["critical_steps"] >= 2 for m in metrics)
    document = json.loads((tmp_path / CURVES_FILE).read_text())
    assert len(document["episodes"]) == 6 and [p["step"] for p in document["curve"]] == [1, 2]
    assert {e["step"] for e in document["episodes"]} == {1, 2}
    assert any(m["completed_subtasks"] < m["assigned_subtasks"] for m in metrics)
    changed = any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert changed
    assert (tmp_path / "model" / "config.json").exists()


def test_lora_trains_only_the_adapters_and_metrics_record_the_step(tmp_path: Path) -> None:
    from langmarl.magrpo.config import LoRAConfig

    model, tokenizer = tiny_model()
    base = {name: p.detach().clone() for name, p in model.named_parameters()}
    env = ParallelTasksEnv(num_tasks=2, subagent_llm=_flaky_subagents(), max_subagent_steps=1,
                           combine="join", plan_fallback="single")  # fmt: skip
    config = OrchestratorGRPOConfig(
        num_steps=1, num_generations=3, max_new_tokens=8, learning_rate=1e-2,
        lora=LoRAConfig(r=2, alpha=4), output_dir=str(tmp_path), num_threads=1,
    )  # fmt: skip
    trainer = OrchestratorGRPO(env, config, model=model, tokenizer=tokenizer)
    assert trainer.trainable and all("lora_" in n for n, p in trainer.model.named_parameters()
                                      if p.requires_grad)  # fmt: skip
    adapters = [p.detach().clone() for p in trainer.trainable]
    trainer.train()
    assert any(not torch.equal(a, p) for a, p in zip(adapters, trainer.trainable, strict=True))
    for name, p in trainer.model.named_parameters():
        if "lora_" not in name:  # peft names wrap the base ones
            original = name.replace("base_model.model.", "").replace(".base_layer", "")
            assert torch.equal(p, base[original]), name
    [line] = RunDir(tmp_path).metrics()
    assert line["step"] == 1 and line["seconds"] > 0 and "loss" in line
    assert trainer.metrics == [line]
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step-000001"]
    saved = [e for e in RunDir(tmp_path).events() if e["event"] == "checkpoint"]
    assert [(e["step"], e["path"]) for e in saved] == [(1, "step-000001")]
    assert RunDir(tmp_path).record().model_dump()["step"] == 1
    # one metrics stream; the config only in run.json; no held-out evaluation
    assert not (tmp_path / "metrics.json").exists() and not (tmp_path / "config.json").exists()
    assert not (tmp_path / "eval.jsonl").exists() and trainer.evaluate() is None
    assert RunDir(tmp_path).record().config["num_generations"] == 3
    episodes = json.loads((tmp_path / CURVES_FILE).read_text())["episodes"]
    assert len(episodes) == 3 and all(isinstance(e["plan"], str) for e in episodes)
    assert {e["plan_status"] for e in episodes} <= {"plan", "plan_numbered", "fallback_single"}


def test_config_errors_name_the_field_and_suggest_a_fix() -> None:
    from langmarl.core.errors import ConfigError

    with pytest.raises(ConfigError, match="Did you mean 'num_generations'"):
        OrchestratorGRPOConfig.from_mapping({"num_generation": 4})
    with pytest.raises(ConfigError, match=r"lora\.r"):
        OrchestratorGRPOConfig.from_mapping({"lora": {"r": 0}})
    with pytest.raises(ConfigError, match="num_generations"):
        OrchestratorGRPOConfig.from_mapping({"num_generations": 1})
