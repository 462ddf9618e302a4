"""A tiny deterministic batched env for the vector path's unit tests (no simulator).

Env ``i`` of the batch holds a position ``x`` that each action adds to; its episode ends after
``lengths[i]`` steps (``terminated``, or ``truncated`` for the envs in ``truncate``), and it
resets itself in the same step: ``obs`` is then ``[0, 0]`` and ``next_obs`` the last one.
``obs = [x, steps so far]``, the env's reward is ``-x`` and ``info["x"]`` is ``x``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

from langmarl.p2p.learner.vector.backend import VecStep


class FakeVecBackend:
    exclusive = False
    device = "cpu"

    def __init__(self, lengths: list[int], truncate: tuple[int, ...] = ()) -> None:
        self.lengths = torch.tensor(lengths)
        self.truncate = torch.tensor([i in truncate for i in range(len(lengths))])
        self.num_envs = len(lengths)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), dtype=np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)
        self.x = torch.zeros(self.num_envs)
        self.t = torch.zeros(self.num_envs)
        self.seeds: list[int | None] = []
        self.closed = False

    def _obs(self) -> torch.Tensor:
        return torch.stack([self.x, self.t], dim=1)

    def reset(self, seed: int | None = None) -> torch.Tensor:
        self.seeds.append(seed)
        self.x.zero_()
        self.t.zero_()
        return self._obs()

    def step(self, action: torch.Tensor) -> VecStep:
        self.x += action[:, 0]
        self.t += 1
        next_obs = self._obs()
        done = self.t >= self.lengths
        info = {"x": self.x.clone()}
        reward = -self.x.clone()
        self.x[done] = 0.0
        self.t[done] = 0.0
        return VecStep(
            obs=self._obs(),
            next_obs=next_obs,
            env_reward=reward,
            terminated=done & ~self.truncate,
            truncated=done & self.truncate,
            info=info,
        )

    def close(self) -> None:
        self.closed = True
