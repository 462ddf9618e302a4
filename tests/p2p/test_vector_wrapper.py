"""The vector reward wrapper over a fake batch and over Gymnasium's SyncVectorEnv (MuJoCo)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.vector.backend import make_backend
from langmarl.p2p.learner.vector.wrapper import VectorRewardWrapper
from langmarl.p2p.learner.wrapper import ENV_REWARD
from langmarl.p2p.reward.function import load_reward_source

from .conftest import PENDULUM_REWARD
from .fake_vec_backend import FakeVecBackend

NEXT_X = """
class NextX(RewardFunction):
    batched = True

    def compute(self, obs, action, next_obs, info):
        return next_obs[:, 0] - obs[:, 0], {"moved": next_obs[:, 0] - obs[:, 0], "x": info["x"]}

    @property
    def latex(self):
        return "r = x' - x"

    @property
    def terms(self):
        return {"moved": "x' - x", "x": "position"}
"""


def test_the_reward_sees_each_transition_and_the_sums_cover_every_env_step() -> None:
    wrapper = VectorRewardWrapper(FakeVecBackend([2, 3]), load_reward_source(NEXT_X))
    assert wrapper.reset(seed=7).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    steps = [wrapper.step(torch.tensor([[1.0], [2.0]])) for _ in range(3)]
    # env 0 ends at step 2: the reward still sees its last transition (x 1 -> 2), not the reset
    assert steps[1].step.done.tolist() == [True, False]
    assert steps[1].terms["x"].tolist() == [2.0, 4.0]
    assert [s.reward.tolist() for s in steps] == [[1.0, 2.0]] * 3
    assert steps[2].step.obs[0].tolist() == [1.0, 1.0]  # env 0 restarted from the reset obs
    sums, count = wrapper.pop_term_stats()
    assert count == 6
    assert sums == {"moved": 9.0, "x": 1 + 2 + 1 + 2 + 4 + 6, ENV_REWARD: -16.0}
    assert wrapper.pop_term_stats() == ({}, 0)


def test_stepping_before_reset_says_to_reset() -> None:
    wrapper = VectorRewardWrapper(FakeVecBackend([2]), load_reward_source(NEXT_X))
    with pytest.raises(RuntimeError, match="call reset"):
        wrapper.step(torch.zeros(1, 1))


def test_gym_vector_puts_the_final_observation_and_info_into_the_transition() -> None:
    config = TrainConfig(env_id="InvertedPendulum-v5", simulator="gym_vector", num_envs=3)
    wrapper = VectorRewardWrapper(make_backend(config), load_reward_source(PENDULUM_REWARD))
    assert wrapper.num_envs == 3 and wrapper.device == "cpu"
    wrapper.reset(seed=1)
    for _ in range(100):  # a constant push tips every pole over within a few steps
        out = wrapper.step(torch.full((3, 1), 3.0))
        if out.step.done.any():
            break
    wrapper.close()
    ended = out.step.done
    assert ended.any() and out.step.terminated[ended].all()
    # next_obs is the terminal state (|angle| > 0.2), obs the next episode's start
    assert (out.step.next_obs[ended, 1].abs() > 0.2).all()
    assert (out.step.obs[ended, 1].abs() < 0.2).all()
    assert torch.allclose(out.reward, 1.0 - out.step.next_obs[:, 1].abs())
    assert out.step.info["reward_survive"].shape == (3,)
    assert out.step.obs.dtype == torch.float32


def test_gym_vector_keeps_the_last_step_info_of_an_ended_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # MuJoCo writes its warnings to ./MUJOCO_LOG.TXT
    config = TrainConfig(
        env_id="HalfCheetah-v5", simulator="gym_vector", num_envs=2, max_episode_steps=2
    )
    backend = make_backend(config)
    backend.reset(seed=0)
    backend.step(torch.ones(2, 6))
    last = backend.step(torch.ones(2, 6))  # the time limit ends both episodes here
    backend.close()
    assert last.truncated.all() and not last.terminated.any()
    # the reset's info has no x_velocity: it comes from the episode's final info
    assert (last.info["x_velocity"] != 0).all()
    assert set(last.info) >= {"x_position", "x_velocity", "reward_forward", "reward_ctrl"}
