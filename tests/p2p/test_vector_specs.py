"""IsaacLab task specs beside the MuJoCo ones: the catalog, the starter rewards, the config."""

from __future__ import annotations

import pytest
import torch

from langmarl.core.errors import ConfigError
from langmarl.p2p.agents.author import reward_templates
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.vector.batch_reward import is_batched
from langmarl.p2p.reward.env_specs import ENV_SPECS, env_catalog
from langmarl.p2p.reward.function import load_reward_source
from langmarl.p2p.reward.isaaclab_specs import ISAACLAB_SPECS, get_isaaclab_spec, reward_template
from langmarl.p2p.reward.validation import check_static


def test_the_catalog_lists_both_simulators() -> None:
    catalog = {entry["env_id"]: entry for entry in env_catalog()}
    simulators = {env_id: entry["simulator"] for env_id, entry in catalog.items()}
    assert {e for e, s in simulators.items() if s == "mujoco"} == set(ENV_SPECS)
    assert {e for e, s in simulators.items() if s == "isaaclab"} == set(ISAACLAB_SPECS)
    ant = catalog["Isaac-Ant-Direct-v0"]
    assert (ant["obs_dim"], ant["act_dim"]) == (36, 8) and ant["info_keys"] == [
        "x_velocity",
        "y_velocity",
    ]
    assert "obs[:,0]=torso height" in str(ant["description"])
    assert {t["env_id"] for t in reward_templates()} == set(catalog)


@pytest.mark.parametrize("env_id", sorted(ISAACLAB_SPECS))
def test_each_starter_reward_passes_the_static_check_and_runs_on_a_batch(env_id: str) -> None:
    spec = get_isaaclab_spec(env_id)
    source = reward_template(spec)
    assert check_static(source).ok, check_static(source).errors
    reward = load_reward_source(source)
    assert is_batched(reward)
    obs = torch.rand(5, spec.obs_dim)
    info = {key: torch.zeros(5) for key in spec.info_keys}
    total, terms = reward.compute(obs, torch.rand(5, spec.act_dim), obs, info)
    assert total.shape == (5,) and set(terms) == set(reward.terms)


@pytest.mark.parametrize("env_id", ["Isaac-Ant-Direct-v0", "Isaac-Humanoid-Direct-v0"])
def test_the_locomotion_layouts_add_up(env_id: str) -> None:
    spec = get_isaaclab_spec(env_id)
    assert spec.obs_dim == 12 + 3 * spec.act_dim  # 12 torso values, then per joint pos/vel/act
    assert f"obs[:,{12 + 2 * spec.act_dim}:]=the previous actions" in spec.description


def test_train_config_pairs_simulators_and_envs() -> None:
    config = TrainConfig.for_env("Isaac-Cartpole-Direct-v0")
    assert config.simulator == "isaaclab" and config.num_envs == 1024
    assert TrainConfig(env_id="Hopper-v5", simulator="gym_vector").simulator == "gym_vector"
    with pytest.raises(ConfigError, match="set simulator='isaaclab'"):
        TrainConfig.from_dict({"env_id": "Isaac-Ant-Direct-v0"})
    with pytest.raises(ConfigError, match="Did you mean 'Isaac-Ant-Direct-v0'"):
        TrainConfig.from_dict({"env_id": "Isaac-Ant-Direct-v1", "simulator": "isaaclab"})
    with pytest.raises(ConfigError, match="simulator"):
        TrainConfig.from_dict({"simulator": "brax"})
