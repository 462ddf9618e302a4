"""`langmarl parl` commands: curves printing, config checks, the shipped configs load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.config import load_config
from langmarl.parl.config import ParallelTasksConfig
from langmarl.parl.curves import CURVES_FILE, curves_document, episode_row
from langmarl.parl.grpo import OrchestratorGRPOConfig

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "parl"


def test_curves_command_prints_the_table(tmp_path: Path) -> None:
    rows = [episode_row(0, {"critical_steps": 3, "serial_steps": 6, "parl": {"total_reward": 0.7}})]
    (tmp_path / CURVES_FILE).write_text(json.dumps(curves_document(rows)))
    result = CliRunner().invoke(build_app(), ["parl", "curves", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "PARL curve" in result.output and "2.000" in result.output  # speedup 6/3


def test_curves_command_names_a_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(build_app(), ["parl", "curves", str(tmp_path)])
    assert result.exit_code != 0


def test_train_rejects_a_config_of_another_env(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"env": "language"}')
    result = CliRunner().invoke(build_app(), ["parl", "train", str(path)])
    assert result.exit_code != 0 and "parallel_tasks" in str(result.exception)


@pytest.mark.parametrize("name", ["language_arithmetic.json", "language_tiny.json"])
def test_shipped_language_configs_load(name: str) -> None:
    assert isinstance(load_config(CONFIGS / name), ParallelTasksConfig)


def test_shipped_grpo_config_validates() -> None:
    data = json.loads((CONFIGS / "grpo_tiny.json").read_text())
    assert OrchestratorGRPOConfig(**data["grpo"]).num_generations == 2
    assert set(data["env"]) >= {"task_set", "subagent_llm"}


def test_shipped_learning_config_builds_env_and_trainer_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langmarl.cli.parl_commands import build_grpo

    monkeypatch.setenv("LANGMARL_TORCH_THREADS", "")  # restored after the test
    monkeypatch.delenv("LANGMARL_TORCH_THREADS")
    data = json.loads((CONFIGS / "grpo_learn.json").read_text())
    env, config = build_grpo(data)
    assert config.lora is not None and config.lambda1_init == config.lambda1_final
    assert env.settings.plan_fallback == "single" and env.settings.combine == "join"
    assert env.subagent_llm.config.temperature == 0.0
    import os

    assert os.environ["LANGMARL_TORCH_THREADS"] == "1"


def test_grpo_config_sections_are_checked() -> None:
    from langmarl.cli.parl_commands import build_grpo
    from langmarl.core.errors import ConfigError

    with pytest.raises(ConfigError, match="Did you mean 'grpo'"):
        build_grpo({"grp": {}})
    with pytest.raises(ConfigError, match="num_step"):
        build_grpo({"grpo": {"num_step": 3}})


def test_ray_placement_names_magrpos_fields_for_the_orchestrator(monkeypatch) -> None:
    """Issue 41: grpo.placement 'ray' (the run itself: tests/magrpo/test_ray_placement.py)
    takes MAGRPO's fields, passed on to the shared loop with the orchestrator as one agent."""
    import sys

    from langmarl.cli.parl_commands import build_grpo
    from langmarl.core.errors import MissingDependencyError

    ray = {"placement": "ray", "ray_address": "10.0.0.5:6379", "agent_num_cpus": 2,
           "agent_num_gpus": 1, "placement_strategy": "SPREAD"}  # fmt: skip
    _, config = build_grpo({"grpo": ray})
    trainer = config.trainer_config(num_tasks=4)
    assert trainer.num_agents == 1 and {k: getattr(trainer, k) for k in ray} == ray
    assert OrchestratorGRPOConfig().placement == "process"
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees when not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'langmarl\[ray\]'"):
        build_grpo({"grpo": {"placement": "ray"}})
