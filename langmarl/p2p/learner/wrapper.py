"""A Gymnasium wrapper that replaces the env's reward with a :class:`RewardFunction`.

The wrapper keeps running sums of every reward term (and of the env's own reward) so the
trainer can log per-term means per rollout with one cheap ``env_method`` call instead of
shipping a dict per step through ``infos``.
"""

from __future__ import annotations

import logging
from typing import Any

import gymnasium as gym

from langmarl.p2p.reward.function import RewardFunction

ENV_REWARD = "env_reward"


class CustomRewardWrapper(gym.Wrapper):
    """Replace the reward with ``reward(obs, action, next_obs, info)``.

    ``info`` gains ``"reward_terms"`` (this step's terms) and ``"env_reward"`` (the original
    reward). ``reward.reset()`` is called at every episode start.

    Args:
        env: The env to wrap.
        reward: The reward to use.
    """

    def __init__(self, env: gym.Env, reward: RewardFunction) -> None:
        super().__init__(env)
        self.reward_fn = reward
        self._obs: Any = None
        self._sums: dict[str, float] = {}
        self._count = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.reward_fn.reset()
        self._obs = obs
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        next_obs, env_reward, terminated, truncated, info = self.env.step(action)
        total, terms = self.reward_fn.compute(self._obs, action, next_obs, info)
        self._obs = next_obs
        info["reward_terms"] = terms
        info[ENV_REWARD] = float(env_reward)
        sums = self._sums
        for name, value in terms.items():
            sums[name] = sums.get(name, 0.0) + value
        sums[ENV_REWARD] = sums.get(ENV_REWARD, 0.0) + float(env_reward)
        self._count += 1
        return next_obs, float(total), terminated, truncated, info

    def pop_term_stats(self) -> tuple[dict[str, float], int]:
        """Return ``(term sums, steps)`` since the last call and start counting afresh."""
        stats = (self._sums, self._count)
        self._sums, self._count = {}, 0
        return stats


def merge_term_stats(stats: list[tuple[dict[str, float], int]]) -> dict[str, float]:
    """Per-step means of each term over several wrappers' ``pop_term_stats`` results."""
    sums: dict[str, float] = {}
    steps = sum(count for _, count in stats)
    for part, _ in stats:
        for name, value in part.items():
            sums[name] = sums.get(name, 0.0) + value
    return {name: value / steps for name, value in sums.items()} if steps else {}


def route_mujoco_warnings() -> None:
    """Send MuJoCo's warnings to logging instead of ``MUJOCO_LOG.TXT`` in the working dir
    (MuJoCo 3.3+ warns about a deprecated attribute in the v5 model files on every load)."""
    import mujoco

    mujoco.set_mju_user_warning(_log_mujoco_warning)


def _log_mujoco_warning(message: str) -> None:
    logging.getLogger("mujoco").debug("%s", message.strip())


def make_reward_env(
    env_id: str,
    reward: RewardFunction | None,
    *,
    max_episode_steps: int | None = None,
    render: bool = False,
    width: int = 320,
    height: int = 240,
) -> gym.Env:
    """A MuJoCo env, optionally with a custom reward (None keeps the env's own reward)."""
    route_mujoco_warnings()
    kwargs: dict[str, Any] = {}
    if render:
        kwargs.update(render_mode="rgb_array", width=width, height=height)
    if max_episode_steps is not None:
        kwargs["max_episode_steps"] = max_episode_steps
    env = gym.make(env_id, **kwargs)
    return CustomRewardWrapper(env, reward) if reward is not None else env
