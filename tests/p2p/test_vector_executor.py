"""The vector path through the real confined executor (slow): the reward loads only there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.p2p import IterationRecord, TrainConfig, train_runs

BATCHED_REWARD = '''
class Upright(RewardFunction):
    """Keep the pole upright, for a whole batch of envs at once."""

    batched = True

    def compute(self, obs, action, next_obs, info):
        upright = 1.0 - abs(next_obs[:, 1])
        effort = -0.01 * (action ** 2).sum(-1)
        return upright + effort, {"upright": upright, "effort": effort}

    @property
    def latex(self):
        return r"r = 1 - |\\theta| - 0.01 a^2"

    @property
    def terms(self):
        return {"upright": "one minus the pole angle", "effort": "action cost"}
'''


@pytest.mark.slow
def test_train_runs_trains_a_batched_reward_on_gym_vector(tmp_path: Path) -> None:
    reward = tmp_path / "reward.py"
    reward.write_text(BATCHED_REWARD)
    iteration = IterationRecord(tmp_path / "iter_1")
    config = TrainConfig.for_env(
        "InvertedPendulum-v5", simulator="gym_vector", num_envs=4, total_timesteps=1024,
        num_steps=128, batch_size=64, n_epochs=1, num_evals=2, eval_episodes=3,
        max_episode_steps=100,
    )  # fmt: skip
    aggregation = train_runs(iteration, reward, [config], [1], timeout_s=120)
    assert aggregation.errors == {}
    summary = aggregation.runs["seed_1"]
    assert summary.steps_done == 1024 and [c.step for c in summary.checkpoints] == [512, 1024]
    assert set(summary.term_means) == {"upright", "effort"}
    assert summary.checkpoints[-1].videos == {} and summary.final_env_return > 0
    assert iteration.derive_status() == "completed" and iteration.validate() == []
    assert json.loads(iteration.config_path.read_text())["simulator"] == "gym_vector"
    assert iteration.read_reward_spec().terms == {
        "upright": "one minus the pole angle",
        "effort": "action cost",
    }
    assert (iteration.path / "trajectory_1024.npz").is_file()
    assert (iteration.path / "policy.safetensors").is_file()


@pytest.mark.slow
def test_a_session_trains_its_reward_on_the_vector_path(tmp_path: Path) -> None:
    """The loop with a scripted LLM: the authored (per-env) reward trains on gym_vector in
    the confined executor, is judged and the session passes."""
    from langmarl.p2p import SessionRecord
    from langmarl.p2p.session.loop import LoopConfig, run_loop
    from langmarl.testing import ScriptedLLM

    from .test_loop import replies, validator

    train = {
        "simulator": "gym_vector", "num_envs": 2, "num_steps": 128, "batch_size": 64,
        "n_epochs": 1, "num_evals": 1, "eval_episodes": 2, "max_episode_steps": 100,
    }  # fmt: skip
    config = LoopConfig(
        env_id="InvertedPendulum-v5", code_judge=False, max_iterations=1, total_timesteps=512,
        train=train,
    )  # fmt: skip
    llm = ScriptedLLM(replies("SCORE: 0.9"))
    result = run_loop("balance", config, llm=llm, runs_dir=tmp_path, validator=validator)
    assert result.status == "passed", result.error
    iteration = SessionRecord(tmp_path / result.session_id).iteration(1)
    assert json.loads(iteration.config_path.read_text())["simulator"] == "gym_vector"
    summary = iteration.read_summary()
    assert summary is not None and summary.steps_done == 512
    assert set(summary.term_means) == {"upright"}
