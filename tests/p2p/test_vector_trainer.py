"""A tiny PPO run through the vector path, in process (the confined run: test_vector_executor)."""

from __future__ import annotations

import json
from pathlib import Path

from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.vector import trainer
from langmarl.p2p.session.records import IterationRecord

from .conftest import PENDULUM_REWARD
from .fake_vec_backend import FakeVecBackend
from .test_vector_sb3_adapter import X_REWARD

TINY = {
    "num_envs": 2, "total_timesteps": 256, "num_steps": 64, "batch_size": 64, "n_epochs": 1,
    "num_evals": 2, "eval_episodes": 2, "max_episode_steps": 50,
}  # fmt: skip


def test_ppo_trains_on_gym_vector_and_writes_the_run_contract(tmp_path: Path) -> None:
    record = IterationRecord(tmp_path / "run")
    record.path.mkdir()
    config = TrainConfig.for_env("InvertedPendulum-v5", simulator="gym_vector", **TINY)
    summary = trainer.run_vector_training(record, PENDULUM_REWARD, config)
    assert summary.steps_done == 256 and summary.env_id == "InvertedPendulum-v5"
    assert [c.step for c in summary.checkpoints] == [128, 256]
    assert set(summary.term_means) == {"upright"}
    assert summary.final_episodic_return == summary.checkpoints[-1].mean_return
    assert record.read_summary() == summary
    rows = [json.loads(line) for line in record.scalars_path.read_text().splitlines()]
    train = [row for row in rows if row["type"] == "train"]
    assert [row["step"] for row in train] == [128, 256]
    assert set(train[0]["term_means"]) == {"upright"} and train[0]["env_reward_mean"] > 0
    assert (record.path / "policy.safetensors").is_file()
    assert (record.path / "trajectory_256.npz").is_file()


def test_an_exclusive_backend_is_evaluated_in_place_once(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    backend = FakeVecBackend([4, 6])
    backend.exclusive = True  # as IsaacLab: one simulation per process
    monkeypatch.setattr(trainer, "make_backend", lambda config: backend)
    record = IterationRecord(tmp_path / "run")
    record.path.mkdir()
    config = TrainConfig(env_id="InvertedPendulum-v5", simulator="gym_vector", **TINY)
    summary = trainer.run_vector_training(record, X_REWARD, config)
    assert [c.step for c in summary.checkpoints] == [256]  # no mid-training evaluation
    assert "only the final checkpoint runs (num_evals=2 ignored)" in caplog.text
    assert backend.seeds[-1] == config.seed * 1000  # the evaluation reset the training envs
    assert summary.checkpoints[0].mean_length == 5.0 and backend.closed
