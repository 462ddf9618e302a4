"""Shared fixtures of the reward-space tests: reward sources and a fake trainer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from langmarl.p2p.learner.evaluation import Episode, save_trajectories
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.session.contracts import EvalCheckpoint, IterationAggregation, TrainSummary
from langmarl.p2p.session.records import IterationRecord

CLASS_REWARD = """
from langmarl.p2p import RewardFunction


class Backwards(RewardFunction):
    def __init__(self):
        self.steps = 0

    def compute(self, obs, action, next_obs, info):
        self.steps += 1
        v = -float(info["x_velocity"])
        ctrl = -0.1 * float(np.sum(np.square(action)))
        return v + ctrl, {"backward": v, "ctrl": ctrl}

    def reset(self):
        self.steps = 0

    @property
    def latex(self):
        return r"r = -v_x - 0.1 \\|a\\|^2"

    @property
    def terms(self):
        return {"backward": "negative x velocity", "ctrl": "control cost"}
"""

LEGACY_REWARD = '''
def reward_fn(obs, action, next_obs, info):
    """Run forward.
    LaTeX: r = v_x
    Terms:
        speed: forward velocity
    """
    v = float(info.get("x_velocity", 0.0))
    return v, {"speed": v}
'''

PENDULUM_REWARD = '''
def reward_fn(obs, action, next_obs, info):
    """Keep the pole upright.
    LaTeX: r = 1 - |\\\\theta|
    Terms:
        upright: one minus the pole angle
    """
    up = 1.0 - abs(float(next_obs[1]))
    return up, {"upright": up}
'''


@pytest.fixture
def reward_sources() -> dict[str, str]:
    return {"class": CLASS_REWARD, "legacy": LEGACY_REWARD, "pendulum": PENDULUM_REWARD}


class FakeTrainer:
    """Writes a plausible run into the iteration dir without training; records its calls."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls: list[tuple[str, TrainConfig]] = []

    def __call__(
        self, it: IterationRecord, reward: Path, configs: list[TrainConfig], seeds: list[int]
    ) -> IterationAggregation:
        self.calls.append((reward.read_text(), configs[0]))
        if self.fail:
            return IterationAggregation(errors={"seed_1": "boom"})
        episode = Episode(seed=0, obs=[np.zeros(4)] * 3, actions=[np.zeros(1)] * 3)
        episode.rewards = [1.0, 1.0, 1.0]
        episode.env_rewards = [1.0, 1.0, 1.0]
        episode.terms = {"upright": [1.0, 1.0, 1.0]}
        episode.infos = {"x_velocity": [-1.0, -2.0, -3.0]}
        save_trajectories(it.path / "trajectory_100.npz", [episode])
        checkpoint = EvalCheckpoint(
            step=100, mean_return=3.0, p10_return=3.0, median_return=3.0, p90_return=3.0,
            mean_env_return=3.0, mean_length=3.0, term_means={"upright": 1.0},
        )  # fmt: skip
        summary = TrainSummary(
            env_id=configs[0].env_id, seed=seeds[0], total_timesteps=100, steps_done=100,
            training_time_s=1.0, steps_per_second=100.0, final_episodic_return=3.0,
            final_env_return=3.0, term_means={"upright": 1.0}, checkpoints=[checkpoint],
        )  # fmt: skip
        it.save_summary(summary)
        return IterationAggregation(runs={"seed_1": summary}, mean_return=3.0, best_run="seed_1")
