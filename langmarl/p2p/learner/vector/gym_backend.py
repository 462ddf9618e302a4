"""The CPU backend: Gymnasium's ``SyncVectorEnv`` over a MuJoCo env, as torch CPU tensors.

The vector env runs in ``SAME_STEP`` autoreset mode: a sub-env whose episode ends is reset in
the same step, its last observation and info arrive in ``info["final_obs"]`` /
``info["final_info"]``. :meth:`GymVectorBackend.step` puts them back into the transition
(``next_obs`` and ``info`` of the ended envs), so a reward sees the true last transition of
every episode, and ``obs`` carries the reset observation for the policy.

Gymnasium's vector ``info`` is a dict of per-env arrays with ``_key`` masks; only numeric,
one-value-per-env keys are kept, and an env a key was not reported for reads 0.0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from langmarl.p2p.learner.vector.backend import VecStep

if TYPE_CHECKING:
    import torch

    from langmarl.p2p.learner.train_config import TrainConfig


class GymVectorBackend:
    """``num_envs`` copies of ``env_id`` in one process, stepped as a batch.

    Args:
        env_id: Gymnasium id (a MuJoCo v5 env in this project).
        num_envs: Sub-envs in the batch.
        max_episode_steps: Cap on episode length (None: the env's own limit).
    """

    exclusive = False
    device = "cpu"

    def __init__(self, env_id: str, num_envs: int, max_episode_steps: int | None = None) -> None:
        import gymnasium as gym
        from gymnasium.vector import AutoresetMode

        from langmarl.p2p.learner.wrapper import route_mujoco_warnings

        route_mujoco_warnings()
        kwargs: dict[str, Any] = {}
        if max_episode_steps is not None:
            kwargs["max_episode_steps"] = max_episode_steps
        self.env = gym.make_vec(
            env_id,
            num_envs=num_envs,
            vectorization_mode="sync",
            vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
            **kwargs,
        )
        self.num_envs = num_envs
        self.observation_space = self.env.single_observation_space
        self.action_space = self.env.single_action_space

    def reset(self, seed: int | None = None) -> torch.Tensor:
        obs, _ = self.env.reset(seed=seed)
        return _tensor(obs)

    def step(self, action: torch.Tensor) -> VecStep:
        obs, reward, terminated, truncated, info = self.env.step(action.detach().cpu().numpy())
        done = np.asarray(terminated) | np.asarray(truncated)
        next_obs = np.array(obs, copy=True)
        step_info = scalar_info(info, self.num_envs)
        if done.any():
            next_obs[done] = np.stack(info["final_obs"][done])
            for key, values in scalar_info(info["final_info"], self.num_envs).items():
                step_info.setdefault(key, np.zeros(self.num_envs))[done] = values[done]
        return VecStep(
            obs=_tensor(obs),
            next_obs=_tensor(next_obs),
            env_reward=_tensor(reward),
            terminated=_tensor(terminated, bool),
            truncated=_tensor(truncated, bool),
            info={key: _tensor(values) for key, values in step_info.items()},
        )

    def close(self) -> None:
        self.env.close()


def scalar_info(info: dict[str, Any], num_envs: int) -> dict[str, np.ndarray]:
    """The numeric one-value-per-env keys of a Gymnasium vector ``info``, as float arrays
    (0.0 where the ``_key`` mask says the env did not report the key)."""
    found: dict[str, np.ndarray] = {}
    for key, value in info.items():
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        array = np.asarray(value)
        if array.shape != (num_envs,) or not np.issubdtype(array.dtype, np.number):
            continue
        mask = np.asarray(info.get(f"_{key}", np.ones(num_envs, dtype=bool)), dtype=bool)
        found[key] = np.where(mask, array.astype(np.float64), 0.0)
    return found


def _tensor(array: Any, dtype: type = float) -> torch.Tensor:
    """``array`` as a CPU tensor: float32, or bool for ``dtype=bool``."""
    import torch

    return torch.as_tensor(np.asarray(array), dtype=torch.bool if dtype is bool else torch.float32)


def make_gym_backend(config: TrainConfig, num_envs: int) -> GymVectorBackend:
    """The ``gym_vector`` entry of :data:`~langmarl.p2p.learner.vector.backend.BACKENDS`."""
    return GymVectorBackend(config.env_id, num_envs, config.max_episode_steps)
