import numpy as np
import pytest

from langmarl.p2p import RewardFunction
from langmarl.p2p.learner.wrapper import ENV_REWARD, make_reward_env, merge_term_stats


class Counting(RewardFunction):
    """Reward = steps since the episode started (stateful), one term."""

    def __init__(self) -> None:
        self.steps = 0
        self.resets = 0

    def compute(self, obs, action, next_obs, info):
        self.steps += 1
        return float(self.steps), {"count": float(self.steps)}

    def reset(self) -> None:
        self.steps = 0
        self.resets += 1

    @property
    def latex(self) -> str:
        return "r = t"

    @property
    def terms(self) -> dict[str, str]:
        return {"count": "steps so far"}


def test_merge_term_stats_weights_by_steps():
    merged = merge_term_stats([({"a": 10.0, ENV_REWARD: 2.0}, 4), ({"a": 2.0}, 1)])
    assert merged == {"a": pytest.approx(12 / 5), ENV_REWARD: pytest.approx(2 / 5)}
    assert merge_term_stats([({}, 0)]) == {}


@pytest.mark.slow
def test_wrapper_replaces_reward_resets_state_and_counts_terms():
    reward = Counting()
    env = make_reward_env("InvertedPendulum-v5", reward, max_episode_steps=3)
    env.reset(seed=0)
    rewards, infos = [], []
    for _ in range(5):
        _, r, terminated, truncated, info = env.step(np.zeros(1, dtype=np.float32))
        rewards.append(r)
        infos.append(info)
        if terminated or truncated:
            env.reset()
    assert rewards == [1.0, 2.0, 3.0, 1.0, 2.0]
    assert reward.resets == 2
    assert infos[0]["reward_terms"] == {"count": 1.0} and infos[0][ENV_REWARD] == 1.0
    sums, steps = env.pop_term_stats()
    assert steps == 5 and sums == {"count": 9.0, ENV_REWARD: 5.0}
    assert env.pop_term_stats() == ({}, 0)
