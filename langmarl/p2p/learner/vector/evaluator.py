"""Evaluation checkpoints over a batch of envs, in the MuJoCo evaluation's record shape.

:func:`evaluate_vector_checkpoint` returns the same :class:`EvalCheckpoint` and writes the
same ``trajectory_<step>.npz`` (:func:`~langmarl.p2p.learner.evaluation.save_trajectories`) as
:func:`~langmarl.p2p.learner.evaluation.evaluate_checkpoint`, so judges, plots and the dashboard
read a vector run like any other. What differs:

- The ``eval_episodes`` episodes run side by side: env ``i`` plays episode ``i`` from the reset
  seeded ``seed * 1000`` (sub-env ``i`` gets ``seed * 1000 + i``); with fewer envs than
  episodes, an env that finishes starts the next one (unseeded: it continues its sub-env's
  random stream). ``Episode.seed`` is ``seed * 1000 + episode index`` either way. Envs beyond
  the episodes still needed keep stepping, unrecorded.
- No videos (``videos`` is empty): the vector backends do not render.
- On a backend that is ``exclusive`` (IsaacLab: one simulation per process) the evaluation runs
  on the training envs and resets them (so the vector trainer runs only the final checkpoint
  there); otherwise it makes its own small batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from langmarl.p2p.learner.evaluation import Episode, Policy, checkpoint_of, save_trajectories
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.vector.backend import VecBackend, make_backend
from langmarl.p2p.learner.vector.wrapper import RewardStep, VectorRewardWrapper
from langmarl.p2p.reward.function import RewardFunction
from langmarl.p2p.session.contracts import EvalCheckpoint


def collect_episodes(
    wrapper: VectorRewardWrapper, policy: Policy, count: int, seed: int
) -> list[Episode]:
    """Run ``policy`` (``(N, obs_dim)`` -> ``(N, act_dim)``, numpy) until ``count`` episodes
    ended; return them in the order they ended."""
    import torch

    num_envs = wrapper.num_envs
    obs = wrapper.reset(seed=seed)
    running: list[Episode | None] = [
        Episode(seed=seed + i) if i < count else None for i in range(num_envs)
    ]
    opened = min(count, num_envs)
    finished: list[Episode] = []
    while len(finished) < count:
        obs_np = _numpy(obs)
        action = np.asarray(policy(obs_np), dtype=np.float32).reshape(num_envs, -1)
        out = wrapper.step(torch.as_tensor(action, device=wrapper.device))
        record_step(running, obs_np, action, out)
        for i in np.flatnonzero(_numpy(out.step.done)):
            episode = running[i]
            if episode is None:
                continue
            finished.append(episode)
            running[i] = Episode(seed=seed + opened) if opened < count else None
            opened = min(opened + 1, count)
        obs = out.step.obs
    return finished[:count]


def record_step(
    running: list[Episode | None], obs: np.ndarray, action: np.ndarray, out: RewardStep
) -> None:
    """Append one step to every recorded env's episode (one host copy per tensor)."""
    rewards, env_rewards = _numpy(out.reward), _numpy(out.step.env_reward)
    terms = {name: _numpy(values) for name, values in out.terms.items()}
    infos = {key: _numpy(values) for key, values in out.step.info.items()}
    for i, episode in enumerate(running):
        if episode is None:
            continue
        episode.obs.append(obs[i].astype(np.float32))
        episode.actions.append(action[i])
        episode.rewards.append(float(rewards[i]))
        episode.env_rewards.append(float(env_rewards[i]))
        for name, values in terms.items():
            episode.terms.setdefault(name, []).append(float(values[i]))
        for key, values in infos.items():
            episode.infos.setdefault(key, []).append(float(values[i]))


def evaluate_vector_checkpoint(
    policy: Policy,
    reward: RewardFunction,
    config: TrainConfig,
    step: int,
    run_dir: Path,
    *,
    backend: VecBackend | None = None,
) -> EvalCheckpoint:
    """Run ``config.eval_episodes`` deterministic episodes and save their trajectories.

    Args:
        policy: Batched raw obs -> action (normalisation included).
        reward: The run's reward (per-env copies are made for a per-env reward).
        config: The run's config (simulator, env, seed, episodes).
        step: Training step of the checkpoint (names the trajectory file).
        run_dir: Where ``trajectory_<step>.npz`` goes.
        backend: The envs to evaluate on (an ``exclusive`` training backend); None makes a
            batch of ``min(num_envs, eval_episodes)`` envs and closes it afterwards.
    """
    own = backend is None
    size = min(config.num_envs, config.eval_episodes)
    envs = backend if backend is not None else make_backend(config, size)
    try:
        wrapper = VectorRewardWrapper(envs, reward)
        episodes = collect_episodes(wrapper, policy, config.eval_episodes, config.seed * 1000)
    finally:
        if own:
            envs.close()
    trajectory = f"trajectory_{step}.npz"
    save_trajectories(run_dir / trajectory, episodes)
    return checkpoint_of(episodes, step, trajectory)


def _numpy(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().numpy()
