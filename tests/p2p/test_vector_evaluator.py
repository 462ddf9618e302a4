"""Evaluation over a batch: episodes side by side, the MuJoCo checkpoint's record shape."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.vector.evaluator import collect_episodes, evaluate_vector_checkpoint
from langmarl.p2p.learner.vector.wrapper import VectorRewardWrapper
from langmarl.p2p.reward.function import load_reward_source

from .conftest import PENDULUM_REWARD
from .fake_vec_backend import FakeVecBackend
from .test_vector_sb3_adapter import X_REWARD


def push(obs: np.ndarray) -> np.ndarray:
    return np.ones((len(obs), 1))


def test_episodes_run_side_by_side_and_ended_envs_start_the_next_ones() -> None:
    backend = FakeVecBackend([2, 3, 5])
    wrapper = VectorRewardWrapper(backend, load_reward_source(X_REWARD))
    episodes = collect_episodes(wrapper, push, count=5, seed=100)
    assert backend.seeds == [100]
    # in the order they ended, numbered in the order they started: env 0 plays episodes 0
    # and 3 (steps 1-2, 3-4), env 1 episodes 1 and 4 (1-3, 4-6), env 2 episode 2 (1-5)
    assert [(ep.seed, len(ep.rewards)) for ep in episodes] == [
        (100, 2), (101, 3), (103, 2), (102, 5), (104, 3),
    ]  # fmt: skip
    first = episodes[0]
    assert first.rewards == [1.0, 2.0] and first.terms == {"x": [1.0, 2.0]}
    assert first.env_rewards == [-1.0, -2.0] and first.infos == {"x": [1.0, 2.0]}
    assert [o.tolist() for o in first.obs] == [[0.0, 0.0], [1.0, 1.0]]
    assert first.actions[0].tolist() == [1.0]


def test_fewer_episodes_than_envs_leave_the_rest_unrecorded() -> None:
    wrapper = VectorRewardWrapper(FakeVecBackend([3, 1, 1, 1]), load_reward_source(X_REWARD))
    episodes = collect_episodes(wrapper, push, count=1, seed=0)
    assert [(ep.seed, len(ep.rewards)) for ep in episodes] == [(0, 3)]


def test_a_checkpoint_on_gym_vector_has_the_mujoco_record_shape(tmp_path: Path) -> None:
    config = TrainConfig.for_env(
        "InvertedPendulum-v5", simulator="gym_vector", num_envs=2, eval_episodes=3, seed=2
    )
    reward = load_reward_source(PENDULUM_REWARD)
    result = evaluate_vector_checkpoint(push, reward, config, 64, tmp_path)
    assert result.step == 64 and result.videos == {} and result.trajectory == "trajectory_64.npz"
    saved = np.load(tmp_path / "trajectory_64.npz")
    returns = saved["returns"]
    assert len(returns) == 3 and result.mean_return == pytest.approx(float(np.mean(returns)))
    assert result.p10_return <= result.median_return <= result.p90_return
    assert set(result.term_means) == {"upright"} and 0 < result.term_means["upright"] <= 1
    # the env pays 1 per step but 0 on the falling one: the last transition is the true one
    assert result.mean_env_return == pytest.approx(result.mean_length - 1)
    assert saved["ep0_obs"].shape[1] == 4 and "ep0_info_reward_survive" in saved
