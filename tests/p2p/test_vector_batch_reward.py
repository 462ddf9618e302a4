"""The vector path's reward contract: batched rewards get the batch, per-env ones a loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from langmarl.p2p.learner.vector.batch_reward import (
    BatchedReward,
    LoopedReward,
    batch_reward,
    is_batched,
)
from langmarl.p2p.reward.function import load_reward_source

from .conftest import LEGACY_REWARD

BATCHED = """
class Speed(RewardFunction):
    batched = True

    def __init__(self):
        self.calls = []

    def compute(self, obs, action, next_obs, info):
        self.calls.append(tuple(next_obs.shape))
        speed = info["x_velocity"]
        ctrl = -0.5 * (action ** 2).sum(-1)
        return speed + ctrl, {"speed": speed, "ctrl": ctrl, "alive": 1.0}

    @property
    def latex(self):
        return "r = v"

    @property
    def terms(self):
        return {"speed": "v", "ctrl": "c", "alive": "a"}
"""

COUNTING = """
class Counting(RewardFunction):
    def __init__(self):
        self.steps = 0

    def compute(self, obs, action, next_obs, info):
        self.steps += 1
        return float(self.steps), {"steps": float(self.steps)}

    def reset(self):
        self.steps = 0

    @property
    def latex(self):
        return "r = t"

    @property
    def terms(self):
        return {"steps": "steps since the episode began"}
"""

RECORDING = """
class Recording(RewardFunction):
    def __init__(self):
        self.seen = []

    def compute(self, obs, action, next_obs, info):
        self.seen.append((type(next_obs), next_obs.shape, type(info["x_velocity"]), next_obs[0]))
        return 0.0, {}

    @property
    def latex(self):
        return "r = 0"

    @property
    def terms(self):
        return {}
"""


def batch(n: int = 3) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
    obs = torch.arange(n * 2, dtype=torch.float32).reshape(n, 2)
    action = torch.ones(n, 1)
    return obs, action, obs + 1, {"x_velocity": torch.tensor([1.0, 2.0, 3.0])[:n]}


def test_a_batched_reward_is_called_once_per_batch_and_broadcasts_numbers() -> None:
    reward = load_reward_source(BATCHED)
    applied = batch_reward(reward, 3)
    assert isinstance(applied, BatchedReward) and is_batched(reward)
    total, terms = applied(*batch())
    assert reward.calls == [(3, 2)]  # type: ignore[attr-defined]
    assert torch.allclose(total, torch.tensor([0.5, 1.5, 2.5]))
    assert set(terms) == {"speed", "ctrl", "alive"}
    assert terms["alive"].tolist() == [1.0, 1.0, 1.0]
    assert all(value.shape == (3,) and value.dtype == torch.float32 for value in terms.values())


def test_a_batched_reward_of_the_wrong_shape_is_named() -> None:
    source = BATCHED.replace("return speed + ctrl,", "return (speed + ctrl)[:, None],")
    with pytest.raises(ValueError, match=r"total reward has shape \(3, 1\), expected \(3,\)"):
        batch_reward(load_reward_source(source), 3)(*batch())
    listed = BATCHED.replace("return speed + ctrl, {", "return [speed + ctrl, {").replace(
        '"alive": 1.0}', '"alive": 1.0}]'
    )
    with pytest.raises(ValueError, match="must return"):
        batch_reward(load_reward_source(listed), 3)(*batch())


def test_a_per_env_reward_is_looped_over_numpy_rows_and_float_info() -> None:
    reward = load_reward_source(LEGACY_REWARD)  # the MuJoCo contract, unchanged
    applied = batch_reward(reward, 3)
    assert isinstance(applied, LoopedReward) and not is_batched(reward)
    total, terms = applied(*batch())
    assert total.tolist() == [1.0, 2.0, 3.0] and terms["speed"].tolist() == [1.0, 2.0, 3.0]

    applied = batch_reward(load_reward_source(RECORDING), 3)
    applied(*batch())
    seen = [copy.seen for copy in applied.copies]  # type: ignore[attr-defined]
    assert seen == [[(np.ndarray, (2,), float, 1.0 + 2 * i)] for i in range(3)]


def test_per_env_copies_restart_only_where_an_episode_starts() -> None:
    applied = batch_reward(load_reward_source(COUNTING), 3)
    for _ in range(2):
        total, _ = applied(*batch())
    assert total.tolist() == [2.0, 2.0, 2.0]  # one copy per env, each counted twice
    applied.reset(torch.tensor([False, True, False]))
    total, terms = applied(*batch())
    assert total.tolist() == [3.0, 1.0, 3.0] and terms["steps"].tolist() == [3.0, 1.0, 3.0]
    applied.reset(None)
    assert applied(*batch())[0].tolist() == [1.0, 1.0, 1.0]


def test_a_legacy_function_is_never_batched() -> None:
    reward = load_reward_source(LEGACY_REWARD + "\nreward_fn.batched = True\n")
    assert not is_batched(reward)
