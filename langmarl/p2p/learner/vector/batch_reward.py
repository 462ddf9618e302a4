"""The vector path's reward contract: one :class:`RewardFunction`, a batch of transitions.

Decision: the reward itself says which form it is written in, and both forms load from the
same file format, through the same :func:`~langmarl.p2p.reward.function.load_reward_source`:

- **batched** (a ``RewardFunction`` subclass with the class attribute ``batched = True``):
  ``compute(obs, action, next_obs, info)`` receives the whole batch, torch tensors on the
  env's device: ``obs``/``next_obs`` ``(N, obs_dim)``, ``action`` ``(N, act_dim)``, ``info``
  ``{key: (N,)}``, and returns ``(total, {term: value})`` with each value of shape ``(N,)``
  (a plain number is broadcast to every env). This is the form for IsaacLab: thousands of envs
  per step on the GPU, where a Python loop over envs would cost more than the simulation and
  move every row to the CPU. Written with operators and tensor methods only (``x ** 2``,
  ``abs(x)``, ``x.sum(-1)``), a batched reward passes the reward-space static check, which
  allows no ``torch`` name. Episodes of a batch end at different steps, so a batched reward
  should keep no state across steps: :meth:`RewardFunction.reset` is called only when the
  whole batch resets.
- **per-env** (every other reward: the MuJoCo contract unchanged, class or legacy
  ``reward_fn``): it is looped over the envs, one copy per env, with numpy rows and an
  ``info`` of floats exactly as :class:`~langmarl.p2p.learner.wrapper.CustomRewardWrapper` gives
  it; each copy is reset when its env starts an episode, so stateful rewards stay correct.
  Every reward the LLM loop validated (on single MuJoCo transitions) trains this way on
  ``simulator="gym_vector"``; on IsaacLab it works but is slow.

vmap was not chosen: the MuJoCo rewards call ``float()`` and numpy on their inputs, which
``torch.func.vmap`` cannot trace, so it would have needed a third contract anyway.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from langmarl.p2p.reward.function import LegacyReward, RewardFunction

if TYPE_CHECKING:
    import torch

BATCHED_ATTRIBUTE = "batched"
"""The class attribute a reward sets to True to receive whole batches."""
BatchOutput = tuple["torch.Tensor", dict[str, "torch.Tensor"]]
"""``(total (N,), {term: (N,)})``."""


class BatchReward(Protocol):
    """A reward over a batch of ``num_envs`` transitions (see the module docstring)."""

    def __call__(
        self,
        obs: torch.Tensor,
        action: torch.Tensor,
        next_obs: torch.Tensor,
        info: dict[str, torch.Tensor],
    ) -> BatchOutput:
        """Per-env total reward and per-env value of every term, each ``(N,)``."""
        ...

    def reset(self, started: torch.Tensor | None = None) -> None:
        """Envs where ``started`` (``(N,)`` bool) is True begin an episode; None: all do."""
        ...


def is_batched(reward: RewardFunction) -> bool:
    """Whether ``reward`` declares ``batched = True`` (legacy functions never do)."""
    if isinstance(reward, LegacyReward):
        return False
    return getattr(reward, BATCHED_ATTRIBUTE, False) is True


def batch_reward(reward: RewardFunction, num_envs: int) -> BatchReward:
    """``reward`` applied to batches of ``num_envs``, in the form it declares."""
    return BatchedReward(reward, num_envs) if is_batched(reward) else LoopedReward(reward, num_envs)


class BatchedReward:
    """A reward written for batches, called once per step; checks the output shapes."""

    def __init__(self, reward: RewardFunction, num_envs: int) -> None:
        self.reward = reward
        self.num_envs = num_envs

    def __call__(
        self,
        obs: torch.Tensor,
        action: torch.Tensor,
        next_obs: torch.Tensor,
        info: dict[str, torch.Tensor],
    ) -> BatchOutput:
        output = self.reward.compute(obs, action, next_obs, info)
        if not (isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], dict)):
            raise ValueError(
                f"batched reward must return (total, dict of terms), got {type(output).__name__}"
            )
        device = obs.device
        total = _column(output[0], self.num_envs, device, "total reward")
        terms = {
            str(name): _column(value, self.num_envs, device, f"term {name!r}")
            for name, value in output[1].items()
        }
        return total, terms

    def reset(self, started: torch.Tensor | None = None) -> None:
        if started is None:
            self.reward.reset()


class LoopedReward:
    """A per-env reward (the MuJoCo contract) looped over the batch, one copy per env."""

    def __init__(self, reward: RewardFunction, num_envs: int) -> None:
        self.copies = [copy.deepcopy(reward) for _ in range(num_envs)]

    def __call__(
        self,
        obs: torch.Tensor,
        action: torch.Tensor,
        next_obs: torch.Tensor,
        info: dict[str, torch.Tensor],
    ) -> BatchOutput:
        rows = [_numpy(t) for t in (obs, action, next_obs)]
        infos = {key: _numpy(value) for key, value in info.items()}
        count = len(self.copies)
        totals = np.zeros(count)
        terms: dict[str, np.ndarray] = {}
        for i, reward in enumerate(self.copies):
            env_info = {key: float(values[i]) for key, values in infos.items()}
            total, env_terms = reward.compute(rows[0][i], rows[1][i], rows[2][i], env_info)
            totals[i] = float(total)
            for name, value in env_terms.items():
                terms.setdefault(name, np.zeros(count))[i] = float(value)
        device = obs.device
        return _tensor(totals, device), {name: _tensor(v, device) for name, v in terms.items()}

    def reset(self, started: torch.Tensor | None = None) -> None:
        indices = range(len(self.copies)) if started is None else np.flatnonzero(_numpy(started))
        for i in indices:
            self.copies[i].reset()


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy()


def _tensor(array: np.ndarray, device: Any) -> torch.Tensor:
    import torch

    return torch.as_tensor(array, dtype=torch.float32, device=device)


def _column(value: Any, num_envs: int, device: Any, what: str) -> torch.Tensor:
    """``value`` as a float32 ``(num_envs,)`` tensor on ``device`` (a number is broadcast)."""
    import torch

    tensor = torch.as_tensor(value, dtype=torch.float32, device=device)
    if tensor.ndim == 0:
        return tensor.expand(num_envs)
    if tuple(tensor.shape) != (num_envs,):
        raise ValueError(
            f"batched reward's {what} has shape {tuple(tensor.shape)}, expected ({num_envs},): "
            f"one value per env (index rows as obs[:, i], reduce with .sum(-1))"
        )
    return tensor
