"""The vector path's reward wrapper: a :class:`VecBackend` whose reward is a reward function.

The batched counterpart of :class:`~langmarl.p2p.learner.wrapper.CustomRewardWrapper`: every step
returns the per-env reward and the per-env value of every term, keeps running sums of the
terms (and of the env's own reward, under :data:`~langmarl.p2p.learner.wrapper.ENV_REWARD`) for the
trainer's per-rollout term means, and resets the reward of every env that starts an episode.
The sums stay tensors on the env's device until :meth:`VectorRewardWrapper.pop_term_stats`,
so a GPU batch is not synchronised every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langmarl.p2p.learner.vector.backend import VecBackend, VecStep
from langmarl.p2p.learner.vector.batch_reward import batch_reward
from langmarl.p2p.learner.wrapper import ENV_REWARD
from langmarl.p2p.reward.function import RewardFunction

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class RewardStep:
    """A batch step with the custom reward.

    Attributes:
        step: The backend's step (observations, env reward, dones, info).
        reward: The custom reward, ``(N,)``.
        terms: Each term's value, ``(N,)``.
    """

    step: VecStep
    reward: torch.Tensor
    terms: dict[str, torch.Tensor]


class VectorRewardWrapper:
    """Replace ``backend``'s reward with ``reward`` over the whole batch.

    Args:
        backend: The batched envs.
        reward: The reward, batched or per-env (:mod:`langmarl.p2p.learner.vector.batch_reward`).
    """

    render_mode: str | None = None
    """The vector backends do not render (SB3's ``VecEnv`` asks)."""

    def __init__(self, backend: VecBackend, reward: RewardFunction) -> None:
        self.backend = backend
        self.reward_fn = reward
        self.reward = batch_reward(reward, backend.num_envs)
        self._obs: Any = None
        self._sums: dict[str, Any] = {}
        self._count = 0

    @property
    def num_envs(self) -> int:
        return self.backend.num_envs

    @property
    def device(self) -> str:
        return self.backend.device

    def reset(self, seed: int | None = None) -> torch.Tensor:
        """Reset every env and the reward; return obs ``(N, obs_dim)``."""
        self._obs = self.backend.reset(seed=seed)
        self.reward.reset(None)
        return self._obs

    def step(self, action: torch.Tensor) -> RewardStep:
        """Step every env with ``action`` ``(N, act_dim)`` and apply the reward."""
        if self._obs is None:
            raise RuntimeError("VectorRewardWrapper.step before reset: call reset() first")
        step = self.backend.step(action)
        reward, terms = self.reward(self._obs, action, step.next_obs, step.info)
        self.reward.reset(step.done)  # those envs' next step starts a new episode
        self._obs = step.obs
        sums = self._sums
        for name, values in terms.items():
            sums[name] = sums.get(name, 0.0) + values.sum()
        sums[ENV_REWARD] = sums.get(ENV_REWARD, 0.0) + step.env_reward.sum()
        self._count += self.num_envs
        return RewardStep(step, reward, terms)

    def pop_term_stats(self) -> tuple[dict[str, float], int]:
        """``(term sums, env steps)`` since the last call (the shape of
        :meth:`~langmarl.p2p.learner.wrapper.CustomRewardWrapper.pop_term_stats`); counting
        restarts."""
        stats = ({name: float(value) for name, value in self._sums.items()}, self._count)
        self._sums, self._count = {}, 0
        return stats

    def close(self) -> None:
        self.backend.close()
