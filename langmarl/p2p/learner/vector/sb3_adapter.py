"""The batch as a stable-baselines3 ``VecEnv``: numpy at SB3's side, tensors at the env's.

SB3's PPO reads what its ``Monitor`` and ``DummyVecEnv`` would give it, so the adapter gives
the same: on an ended episode, ``infos[i]`` holds ``terminal_observation`` (the episode's last
observation), ``TimeLimit.truncated`` and ``episode`` (``r``: the custom-reward return, ``l``:
its length, ``t``: seconds since the adapter started). ``env_method`` and ``get_attr``
address the batch as a whole (one answer, not one per env): the trainer's
``env_method("pop_term_stats")`` gets the wrapper's sums over all envs.

Importing this module imports SB3; the vector trainer imports it only when it trains.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from langmarl.p2p.learner.vector.wrapper import VectorRewardWrapper


class RewardVecEnv(VecEnv):
    """A :class:`VectorRewardWrapper` as an SB3 ``VecEnv`` (one SB3 env per sub-env).

    Args:
        wrapper: The reward-wrapped batch.
    """

    def __init__(self, wrapper: VectorRewardWrapper) -> None:
        self.wrapper = wrapper  # before VecEnv.__init__, which asks for render_mode
        backend = wrapper.backend
        super().__init__(wrapper.num_envs, backend.observation_space, backend.action_space)
        self._actions: np.ndarray | None = None
        self._returns = np.zeros(self.num_envs)
        self._lengths = np.zeros(self.num_envs, dtype=np.int64)
        self._started = time.perf_counter()

    def reset(self) -> np.ndarray:
        obs = self.wrapper.reset(seed=self._seeds[0])
        self._reset_seeds()
        self._reset_options()
        self._returns[:] = 0.0
        self._lengths[:] = 0
        return _numpy(obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        import torch

        if self._actions is None:
            raise RuntimeError("RewardVecEnv.step_wait without step_async: call step()")
        action = torch.as_tensor(
            np.asarray(self._actions, dtype=np.float32).reshape(self.num_envs, -1),
            device=self.wrapper.device,
        )
        out = self.wrapper.step(action)
        reward = _numpy(out.reward).astype(np.float32)
        done = _numpy(out.step.done)
        self._returns += reward
        self._lengths += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if done.any():
            self._episode_ends(infos, out.step, done)
        return _numpy(out.step.obs), reward, done, infos

    def _episode_ends(self, infos: list[dict[str, Any]], step: Any, done: np.ndarray) -> None:
        final = _numpy(step.next_obs)
        terminated, truncated = _numpy(step.terminated), _numpy(step.truncated)
        elapsed = round(time.perf_counter() - self._started, 6)
        for i in np.flatnonzero(done):
            infos[i] = {
                "terminal_observation": final[i],
                "TimeLimit.truncated": bool(truncated[i] and not terminated[i]),
                "episode": {"r": float(self._returns[i]), "l": int(self._lengths[i]), "t": elapsed},
            }
        self._returns[done] = 0.0
        self._lengths[done] = 0

    def close(self) -> None:
        self.wrapper.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.wrapper, attr_name)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self.wrapper, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        return [getattr(self.wrapper, method_name)(*method_args, **method_kwargs)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(list(self._get_indices(indices)))


def _numpy(tensor: Any) -> np.ndarray:
    return tensor.detach().cpu().numpy()
