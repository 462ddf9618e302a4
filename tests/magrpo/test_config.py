import pydantic
import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.config import ActorCriticConfig, MAGRPOConfig


def test_defaults_are_valid():
    config = MAGRPOConfig()
    assert config.num_generations >= 2 and config.joint_mode == "align"


def test_one_generation_is_refused_with_the_fix():
    with pytest.raises(pydantic.ValidationError, match="set num_generations >= 2"):
        MAGRPOConfig(num_generations=1)


def test_multi_turn_actor_critic_needs_one_generation():
    with pytest.raises(pydantic.ValidationError, match="set num_generations=1"):
        ActorCriticConfig(num_turns=2, num_generations=4)
    assert ActorCriticConfig(num_turns=1, num_generations=4).num_generations == 4


def test_device_list_must_match_agents():
    with pytest.raises(pydantic.ValidationError, match="one device per agent"):
        MAGRPOConfig(num_agents=2, agent_devices=["cpu"])
    assert MAGRPOConfig(num_agents=2, agent_devices=["cpu", "cpu"]).device_of(1) == "cpu"


def test_huge_cross_trees_are_refused():
    with pytest.raises(pydantic.ValidationError, match="joint_mode='align'"):
        MAGRPOConfig(num_agents=3, num_generations=4, num_turns=3, joint_mode="cross")


def test_unknown_joint_mode():
    with pytest.raises(pydantic.ValidationError, match="joint_mode"):
        MAGRPOConfig(joint_mode="product")


def test_config_errors_are_value_errors():
    assert issubclass(ConfigError, ValueError)
