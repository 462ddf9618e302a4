"""The batch as an SB3 VecEnv: numpy out, Monitor-style episode infos, whole-batch methods."""

from __future__ import annotations

import numpy as np

from langmarl.p2p.learner.vector.sb3_adapter import RewardVecEnv
from langmarl.p2p.learner.vector.wrapper import VectorRewardWrapper
from langmarl.p2p.learner.wrapper import ENV_REWARD
from langmarl.p2p.reward.function import load_reward_source

from .fake_vec_backend import FakeVecBackend

X_REWARD = '''
def reward_fn(obs, action, next_obs, info):
    """Be far along x.
    LaTeX: r = x
    Terms:
        x: position
    """
    return float(next_obs[0]), {"x": float(next_obs[0])}
'''


def test_ended_episodes_carry_the_monitor_and_time_limit_infos() -> None:
    backend = FakeVecBackend([2, 3], truncate=(1,))
    venv = RewardVecEnv(VectorRewardWrapper(backend, load_reward_source(X_REWARD)))
    venv.seed(5)
    obs = venv.reset()
    assert backend.seeds == [5] and obs.dtype == np.float32 and obs.shape == (2, 2)
    assert venv.render_mode is None
    results = [venv.step(np.array([[1.0], [1.0]])) for _ in range(3)]
    (_, rewards, dones, infos) = results[1]
    assert rewards.dtype == np.float32 and rewards.tolist() == [2.0, 2.0]
    assert dones.tolist() == [True, False] and infos[1] == {}
    assert infos[0]["terminal_observation"].tolist() == [2.0, 2.0]
    assert infos[0]["episode"]["r"] == 3.0 and infos[0]["episode"]["l"] == 2
    assert infos[0]["TimeLimit.truncated"] is False
    (obs, _, dones, infos) = results[2]
    assert dones.tolist() == [False, True] and infos[1]["TimeLimit.truncated"] is True
    assert infos[1]["episode"] == {"r": 6.0, "l": 3, "t": infos[1]["episode"]["t"]}
    assert obs[1].tolist() == [0.0, 0.0]


def test_methods_and_attributes_address_the_whole_batch() -> None:
    backend = FakeVecBackend([4, 4, 4])
    venv = RewardVecEnv(VectorRewardWrapper(backend, load_reward_source(X_REWARD)))
    venv.reset()
    venv.step(np.ones((3, 1)))
    [(sums, count)] = venv.env_method("pop_term_stats")
    assert count == 3 and sums == {"x": 3.0, ENV_REWARD: -3.0}
    assert venv.get_attr("num_envs") == [3]
    assert venv.env_is_wrapped(object) == [False, False, False]
    venv.close()
    assert backend.closed
