"""One PPO training run (stable-baselines3) with a custom reward, writing the run contract.

Runs inside the executor process (:mod:`~langmarl.p2p.learner.executor`), never in the loop's
process.
Besides the contract's scalars, videos and summary, the run saves the trained policy as data
(:mod:`langmarl.p2p.learner.ppo_policy`: ``policy.safetensors`` and ``normalize.json``, never a
pickle, since this process runs LLM-written code), far inside the executor's disk budget
(``TRAINING_LIMITS``). ``langmarl p2p play`` (:mod:`langmarl.p2p.learner.play`) loads them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from langmarl.core.files import append_jsonl
from langmarl.p2p.learner.evaluation import Policy, evaluate_checkpoint
from langmarl.p2p.learner.ppo_policy import build_ppo, save_policy
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.wrapper import ENV_REWARD, make_reward_env, merge_term_stats
from langmarl.p2p.reward.function import RewardFunction, load_reward_source
from langmarl.p2p.session.contracts import EvalCheckpoint, TrainSummary
from langmarl.p2p.session.iteration_record import IterationRecord

logger = logging.getLogger(__name__)

Evaluate = Callable[[Policy, RewardFunction, TrainConfig, int, Path], EvalCheckpoint]
"""``(policy, reward, config, step, run_dir) -> checkpoint``: how a run evaluates
(:func:`~langmarl.p2p.learner.evaluation.evaluate_checkpoint` here; the vector path passes its
own)."""


def _env_factory(config: TrainConfig, reward_source: str | None, rank: int) -> Callable[[], Any]:
    """A picklable factory: the reward is re-loaded from source inside each env process."""

    def factory() -> Any:
        from stable_baselines3.common.monitor import Monitor

        reward = load_reward_source(reward_source) if reward_source is not None else None
        env = make_reward_env(config.env_id, reward, max_episode_steps=config.max_episode_steps)
        env.reset(seed=config.seed + rank)
        return Monitor(env)

    return factory


def build_vec_env(config: TrainConfig, reward_source: str | None) -> Any:
    """DummyVecEnv (1 env) or SubprocVecEnv (several), wrapped in VecNormalize."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize

    factories = [_env_factory(config, reward_source, i) for i in range(config.num_envs)]
    venv = DummyVecEnv(factories) if config.num_envs == 1 else SubprocVecEnv(factories)
    venv.seed(config.seed)
    return VecNormalize(
        venv, norm_obs=config.normalize_obs, norm_reward=config.normalize_reward, gamma=config.gamma
    )


def make_policy(model: Any, venv: Any) -> Policy:
    """Raw obs -> deterministic action, normalising with the current VecNormalize stats."""

    def policy(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(venv.normalize_obs(obs), deterministic=True)
        return np.asarray(action)

    return policy


def eval_steps(config: TrainConfig) -> list[int]:
    """Steps at which intermediate checkpoints run (the final one runs after training)."""
    total, n = config.total_timesteps, config.num_evals
    return [total * k // n for k in range(1, n)]


def train_row(model: Any, venv: Any, started: float) -> dict[str, Any]:
    """One ``type=train`` scalars row: episode stats, per-term means, throughput."""
    terms = merge_term_stats(venv.env_method("pop_term_stats"))
    episodes = list(model.ep_info_buffer)
    elapsed = time.perf_counter() - started
    return {
        "type": "train",
        "step": int(model.num_timesteps),
        "episodic_return": float(np.mean([e["r"] for e in episodes])) if episodes else None,
        "episode_length": float(np.mean([e["l"] for e in episodes])) if episodes else None,
        "env_reward_mean": terms.pop(ENV_REWARD, None),
        "term_means": terms,
        "steps_per_second": model.num_timesteps / elapsed if elapsed > 0 else None,
        "time_s": elapsed,
        **ppo_losses(model),
    }


PPO_LOSSES = ("entropy_loss", "value_loss", "policy_gradient_loss", "approx_kl",
              "clip_fraction", "explained_variance")  # fmt: skip
"""SB3's ``train/*`` values kept in the scalars (the session analysis reads their trends)."""


def ppo_losses(model: Any) -> dict[str, float]:
    """The last PPO update's losses as SB3 logged them (``train/<name>``; none before the
    first update). At a rollout's end they are those of the update after the previous
    rollout: SB3 dumps (and clears) its log values before each update."""
    logged = getattr(getattr(model, "logger", None), "name_to_value", {}) or {}
    found = {name: logged.get(f"train/{name}") for name in PPO_LOSSES}
    return {f"train/{k}": float(v) for k, v in found.items() if v is not None}


def _callback(
    record: IterationRecord,
    config: TrainConfig,
    reward: RewardFunction,
    started: float,
    evaluate: Evaluate = evaluate_checkpoint,
) -> Any:
    from stable_baselines3.common.callbacks import BaseCallback

    class ContractCallback(BaseCallback):
        """Writes scalars per rollout and runs intermediate evaluation checkpoints."""

        def __init__(self) -> None:
            super().__init__()
            self.pending = eval_steps(config)
            self.checkpoints: list[EvalCheckpoint] = []

        def _on_step(self) -> bool:
            if self.pending and self.num_timesteps >= self.pending[0]:
                self.pending.pop(0)
                self.checkpoints.append(
                    checkpoint(record, config, reward, self.model, None, evaluate)
                )
            return True

        def _on_rollout_end(self) -> None:
            append_jsonl(record.scalars_path, train_row(self.model, self.training_env, started))

    return ContractCallback()


def checkpoint(
    record: IterationRecord,
    config: TrainConfig,
    reward: RewardFunction,
    model: Any,
    step: int | None,
    evaluate: Evaluate = evaluate_checkpoint,
) -> EvalCheckpoint:
    """Evaluate ``model`` now and append a ``type=eval`` scalars row."""
    venv = model.get_env()
    result = evaluate(
        make_policy(model, venv), reward, config, step or int(model.num_timesteps), record.path
    )
    append_jsonl(record.scalars_path, {"type": "eval", **result.model_dump()})
    return result


def run_training(record: IterationRecord, reward_source: str, config: TrainConfig) -> TrainSummary:
    """Train PPO on ``reward_source``; write scalars, checkpoints, videos, the policy
    (:func:`~langmarl.p2p.learner.ppo_policy.save_policy`) and summary.json.

    Args:
        record: The run directory to write into.
        reward_source: Validated reward source code.
        config: The run's hyperparameters.
    """
    import torch

    torch.set_num_threads(config.torch_threads)
    os.environ.setdefault("MUJOCO_GL", "egl")
    reward = load_reward_source(reward_source)
    return train_ppo(record, config, reward, build_vec_env(config, reward_source))


def train_ppo(
    record: IterationRecord,
    config: TrainConfig,
    reward: RewardFunction,
    venv: Any,
    evaluate: Evaluate = evaluate_checkpoint,
) -> TrainSummary:
    """Train PPO in ``venv`` (a ``VecNormalize``, closed at the end), evaluating with
    ``evaluate``; write scalars, checkpoints, the policy and summary.json."""
    started = time.perf_counter()
    try:
        model = build_ppo(config, venv)
        callback = _callback(record, config, reward, started, evaluate)
        model.learn(total_timesteps=config.total_timesteps, callback=callback)
        training_time = time.perf_counter() - started
        save_policy(model, venv, record.path)
        final = checkpoint(record, config, reward, model, int(model.num_timesteps), evaluate)
    finally:
        venv.close()
    summary = TrainSummary(
        env_id=config.env_id,
        seed=config.seed,
        total_timesteps=config.total_timesteps,
        steps_done=int(model.num_timesteps),
        training_time_s=training_time,
        steps_per_second=model.num_timesteps / max(training_time, 1e-9),
        final_episodic_return=final.mean_return,
        final_env_return=final.mean_env_return,
        term_means=final.term_means,
        checkpoints=[*callback.checkpoints, final],
    )
    record.save_summary(summary)
    return summary
