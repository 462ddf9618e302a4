"""The batched-env contract of the vector path, and the table of simulators behind it.

A backend steps ``num_envs`` environments as one batch of torch tensors on its ``device``
and resets each sub-env itself when its episode ends (as IsaacLab does and as Gymnasium's
vector envs do in ``SAME_STEP`` autoreset mode). Two backends keep it:

- ``gym_vector`` (:class:`~langmarl.p2p.learner.vector.gym_backend.GymVectorBackend`): Gymnasium's
  ``SyncVectorEnv`` over a MuJoCo env, CPU tensors; what this machine runs and tests.
- ``isaaclab`` (:class:`~langmarl.p2p.learner.vector.isaaclab_backend.IsaacLabBackend`): an
  IsaacLab task on the GPU; needs the ``isaaclab`` extra, an NVIDIA GPU and Isaac Sim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langmarl.core.entry_points import load_entry_point
from langmarl.core.errors import ConfigError
from langmarl.core.validation import did_you_mean

if TYPE_CHECKING:
    import torch

    from langmarl.p2p.learner.train_config import TrainConfig


@dataclass(frozen=True)
class VecStep:
    """One step of every env of a batch; tensors have ``num_envs`` rows.

    Attributes:
        obs: What the policy sees next, ``(N, obs_dim)``: the first observation of the next
            episode where one ended.
        next_obs: The transition's own next observation, ``(N, obs_dim)``: the last one of
            the episode where one ended, when the simulator reports it (Gymnasium does;
            IsaacLab does not, so there it equals ``obs``).
        env_reward: The env's own reward, ``(N,)``.
        terminated: ``(N,)`` bool, the episode ended in a terminal state.
        truncated: ``(N,)`` bool, the episode was cut (time limit).
        info: Scalar per-env values of the step, each ``(N,)`` float.
    """

    obs: torch.Tensor
    next_obs: torch.Tensor
    env_reward: torch.Tensor
    terminated: torch.Tensor
    truncated: torch.Tensor
    info: dict[str, torch.Tensor]

    @property
    def done(self) -> torch.Tensor:
        """``(N,)`` bool: the episode ended (terminated or truncated)."""
        return self.terminated | self.truncated


@runtime_checkable
class VecBackend(Protocol):
    """``num_envs`` envs stepped as one batch of tensors on ``device``.

    ``observation_space``/``action_space`` are the spaces of one env (Gymnasium ``Box``).
    ``exclusive`` is True when a process can hold only one such batch (IsaacLab runs one
    simulation per process), so evaluation must reuse the training envs.
    """

    num_envs: int
    device: str
    observation_space: Any
    action_space: Any
    exclusive: bool

    def reset(self, seed: int | None = None) -> torch.Tensor:
        """Reset every env (env ``i`` seeded ``seed + i``); return obs ``(N, obs_dim)``."""
        ...

    def step(self, action: torch.Tensor) -> VecStep:
        """Apply ``action`` ``(N, act_dim)`` to every env; ended envs reset themselves."""
        ...

    def close(self) -> None:
        """Release the simulator."""
        ...


BACKENDS: dict[str, str] = {
    "gym_vector": "langmarl.p2p.learner.vector.gym_backend:make_gym_backend",
    "isaaclab": "langmarl.p2p.learner.vector.isaaclab_backend:make_isaaclab_backend",
}
"""``TrainConfig.simulator`` -> ``"module:factory"`` taking ``(config, num_envs)``; a
factory imports its simulator only when called."""


def make_backend(config: TrainConfig, num_envs: int | None = None) -> VecBackend:
    """The backend ``config.simulator`` names, with ``num_envs`` envs (default
    ``config.num_envs``).

    Raises:
        ConfigError: ``config.simulator`` is not a vector simulator.
        MissingDependencyError: Its simulator is not installed (the message names the extra).
    """
    if config.simulator not in BACKENDS:
        raise ConfigError(
            f"simulator={config.simulator!r} has no vector backend"
            f"{did_you_mean(config.simulator, BACKENDS)}; choose one of {sorted(BACKENDS)} "
            f"(simulator='mujoco' trains through langmarl.p2p.learner.sb3_trainer)"
        )
    factory = load_entry_point(BACKENDS[config.simulator], f"simulator {config.simulator!r}")
    backend: VecBackend = factory(config, num_envs or config.num_envs)
    return backend
