"""Short PARL training runs with the real embedded model (slow): curves are recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.envs.parallel.env import ParallelTasksEnv
from langmarl.llm import LLMClient, LLMConfig
from langmarl.parl.config import ParallelTasksConfig
from langmarl.parl.curves import CURVES_FILE
from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig
from langmarl.parl.language import build_parl_trainer

pytestmark = pytest.mark.slow


def test_grpo_on_the_embedded_orchestrator_records_curves(tmp_path: Path) -> None:
    env = ParallelTasksEnv(
        subagent_llm=LLMClient(LLMConfig.from_preset("local"), role="subagent"),
        num_tasks=4, max_subagent_steps=1, subagent_max_tokens=8, combine="join",
    )  # fmt: skip
    config = OrchestratorGRPOConfig(
        num_steps=2, num_generations=2, max_new_tokens=24, output_dir=str(tmp_path),
        seed=0, save_steps=None, save_model=False,  # ~3 GB of full-model saves
    )  # fmt: skip
    metrics = OrchestratorGRPO(env, config).train()
    assert [m["step"] for m in metrics] == [1, 2]
    assert [m["lambda1"] for m in metrics] == pytest.approx([0.1, 0.05])
    document = json.loads((tmp_path / CURVES_FILE).read_text())
    assert len(document["episodes"]) == 4
    for point in document["curve"]:
        assert point["num_subagents"] >= 1
        assert 0 < point["critical_steps"] <= point["serial_steps"]


def test_language_space_run_on_the_embedded_model_records_curves(tmp_path: Path) -> None:
    llm = LLMConfig.from_preset("local").model_copy(update={"max_tokens": 16})
    config = ParallelTasksConfig(
        exp_name="parl_lang", runs_dir=str(tmp_path), checkpoint_dir=str(tmp_path / "ck"),
        llm=llm, num_iterations=1, trajectories_per_iteration=2, num_tasks=4,
        max_subagent_steps=1, plan_max_tokens=32, subagent_max_tokens=8, combine="join", seed=0,
        validation_size=1,
    )  # fmt: skip
    trainer = build_parl_trainer(config)
    metrics = trainer.train()
    assert len(metrics) == 1
    document = trainer.store.read_json("parl_lang", CURVES_FILE)
    assert [p["step"] for p in document["curve"]] == [0]
    assert document["curve"][0]["episodes"] == 2
    assert document["curve"][0]["critical_steps"] >= 2
    policies = trainer.checkpoint.get_policies()
    assert set(policies) == {"orchestrator"} and policies["orchestrator"].strip()
