"""Config files, overrides, subclass selection and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.config import (
    BaseConfig,
    LanguageTaskConfig,
    OvercookedConfig,
    PistonballConfig,
    apply_overrides,
    load_config,
    parse_assignment,
)
from langmarl.core.errors import ConfigError


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_reference_defaults() -> None:
    config = LanguageTaskConfig()
    assert (config.paradigm, config.num_iterations, config.trajectories_per_iteration) == (
        "central_credit",
        5,
        10,
    )
    assert (config.max_workers, config.episode_generation_workers, config.optimizer_workers) == (
        5,
        8,
        1,
    )
    assert (config.runs_dir, config.run_id) == ("runs", None)
    assert config.checkpoint_dir is None  # exports go inside the run
    assert OvercookedConfig().episode_horizon == 400 and OvercookedConfig().p0_agent == "ProAgent"
    piston = PistonballConfig()
    assert (piston.num_pistons, piston.max_cycles, piston.frame_size) == (20, 125, 84)


@pytest.mark.parametrize(
    ("env", "cls"),
    [
        ("language", LanguageTaskConfig),
        ("overcooked", OvercookedConfig),
        ("pistonball", PistonballConfig),
    ],
)
def test_load_config_picks_the_class_from_env(tmp_path: Path, env: str, cls: type) -> None:
    config = load_config(write(tmp_path / "c.json", {"env": env}))
    assert type(config) is cls


def test_yaml_and_dotted_overrides(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("env: language\ntask_type: math\nllm: gpt-4o-mini\n")
    config = load_config(path, {"num_iterations": 3, "llm.temperature": 0.2})
    assert isinstance(config, LanguageTaskConfig)
    assert config.task_type == "math" and config.num_iterations == 3
    assert config.llm is not None and config.llm.name == "gpt-4o-mini"
    assert config.llm.temperature == 0.2


def test_unknown_key_suggests_the_right_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path / "c.json", {"num_iteration": 3}))
    message = str(info.value)
    assert "num_iteration" in message and "Did you mean 'num_iterations'?" in message
    assert str(tmp_path / "c.json") in message


def test_wrong_type_and_range_name_field_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path / "c.json", {"trajectories_per_iteration": 0, "paradigm": "x"}))
    message = str(info.value)
    assert "trajectories_per_iteration" in message and "(got 0)" in message
    assert "paradigm" in message and "central_credit" in message


def test_unknown_env_and_llm_preset_suggest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Did you mean 'language'"):
        load_config(write(tmp_path / "a.json", {"env": "langauge"}))
    with pytest.raises(ConfigError, match="Did you mean 'gpt-4o-mini'"):
        load_config(write(tmp_path / "b.json", {"llm": "gpt-4o-mni"}))


def test_missing_or_malformed_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid"):
        load_config(bad)
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path / "list.json", [1, 2]))


def test_llm_fallbacks() -> None:
    config = BaseConfig(llm="gpt-4o", critic_llm="gpt-4o-mini")
    assert config.get_actor_llm().name == "gpt-4o"
    assert config.get_critic_llm().name == "gpt-4o-mini"
    assert config.get_optimizer_llm().name == "gpt-4o"
    assert BaseConfig().get_actor_llm().provider == "local"


def test_to_json_round_trips_without_secrets(tmp_path: Path) -> None:
    secret = "sk-test-do-not-write-0123456789"
    config = LanguageTaskConfig(llm={"preset": "gpt-4o-mini", "api_key": secret}, num_agents=3)
    assert config.llm is not None and config.llm.get_api_key() == secret
    path = tmp_path / "out.json"
    config.to_json(path)
    assert secret not in path.read_text()
    again = LanguageTaskConfig.from_json(path, {"num_agents": 4})
    assert again.num_agents == 4 and again.llm is not None and again.llm.name == "gpt-4o-mini"
    assert secret not in repr(config)


def test_parse_assignment_reads_yaml_scalars() -> None:
    assert parse_assignment("num_iterations=3") == ("num_iterations", 3)
    assert parse_assignment("use_verified_reward=true") == ("use_verified_reward", True)
    assert parse_assignment("data_limit=null") == ("data_limit", None)
    assert parse_assignment("exp_name=my run") == ("exp_name", "my run")
    with pytest.raises(ConfigError, match="key=value"):
        parse_assignment("num_iterations")


def test_apply_overrides_expands_preset_strings() -> None:
    data = {"llm": "local", "num_agents": 2}
    result = apply_overrides(data, {"llm.max_tokens": 64, "a.b.c": 1})
    assert result["llm"] == {"preset": "local", "max_tokens": 64}
    assert result["a"] == {"b": {"c": 1}}
    assert data["llm"] == "local"  # the input is not modified


def test_pistonball_keeps_one_agent_per_piston(tmp_path: Path) -> None:
    assert PistonballConfig(num_pistons=5).num_agents == 5
    assert PistonballConfig(num_agents=4).num_pistons == 4
    config = load_config(write(tmp_path / "p.json", {"env": "pistonball", "num_pistons": 6}))
    assert isinstance(config, PistonballConfig) and config.num_agents == 6
    with pytest.raises(ConfigError, match=r"num_agents \(3\) must equal num_pistons \(5\)"):
        load_config(
            write(tmp_path / "q.json", {"env": "pistonball", "num_pistons": 5, "num_agents": 3})
        )
