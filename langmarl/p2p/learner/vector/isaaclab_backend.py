"""The GPU backend: an IsaacLab task (IsaacLab 2.x public API), never run on this machine.

IsaacLab needs an NVIDIA GPU and Isaac Sim, so it sits behind the ``isaaclab`` extra (not in
``all``); without it :func:`require_isaaclab` raises a
:class:`~langmarl.core.errors.MissingDependencyError` naming the extra and that need. Importing
this module needs nothing: IsaacLab loads when a backend is made.

How it drives IsaacLab: ``AppLauncher(headless=True)`` starts Isaac Sim once per process
(before any task module is imported), ``import isaaclab_tasks`` registers the tasks,
``parse_env_cfg(env_id, device=..., num_envs=...)`` builds the task config and
``gym.make(env_id, cfg=cfg)`` the env. A step returns ``({"policy": obs}, reward,
terminated, time_outs, extras)`` as ``(N, ...)`` tensors on the GPU; the task resets ended
envs inside the step, so ``obs`` of an ended env is already its next episode's first
observation and there is no final observation (``VecStep.next_obs`` is ``obs``). ``info``
holds the spec's :attr:`~langmarl.p2p.reward.isaaclab_specs.IsaacLabEnvSpec.info_sources`, read from
the task's attributes after the step.

What was not checked: that these calls run as written (no GPU here), and that Isaac Sim
starts under the executor's confinement (it needs ``/dev/nvidia*``, its install and caches
readable; :func:`~langmarl.p2p.learner.executor.training_confinement` does not grant them yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langmarl.core.errors import MissingDependencyError
from langmarl.p2p.learner.vector.backend import VecStep
from langmarl.p2p.reward.isaaclab_specs import IsaacLabEnvSpec, get_isaaclab_spec

if TYPE_CHECKING:
    import torch

    from langmarl.p2p.learner.train_config import TrainConfig

ISAACLAB_INSTALL = (
    "pip install 'langmarl[isaaclab]' 'isaaclab[isaacsim,all]' --extra-index-url "
    "https://pypi.nvidia.com, on Linux with an NVIDIA GPU (Isaac Sim does not run on a "
    "CPU-only machine; simulator='gym_vector' runs the same vector path on the CPU)"
)
_APP: list[Any] = []
"""The process's Isaac Sim app: Isaac Sim can start only once per process."""


def require_isaaclab() -> Any:
    """Start Isaac Sim headless (once per process) and return IsaacLab's ``parse_env_cfg``.

    Raises:
        MissingDependencyError: IsaacLab is not installed; names the extra and its needs.
    """
    try:
        from isaaclab.app import AppLauncher
    except ImportError:
        raise MissingDependencyError(
            "isaaclab", "isaaclab", "simulator='isaaclab'", ISAACLAB_INSTALL
        ) from None
    if not _APP:
        _APP.append(AppLauncher(headless=True).app)
    import isaaclab_tasks  # noqa: F401 - registers the Isaac-* gym ids
    from isaaclab_tasks.utils import parse_env_cfg

    return parse_env_cfg


class IsaacLabBackend:
    """``num_envs`` envs of one IsaacLab task on ``device``.

    Args:
        spec: The task.
        num_envs: Envs in the batch (the task's ``scene.num_envs``).
        seed: The task config's seed.
        device: Simulation device.
    """

    exclusive = True

    def __init__(
        self, spec: IsaacLabEnvSpec, num_envs: int, seed: int, device: str = "cuda:0"
    ) -> None:
        import gymnasium as gym

        parse_env_cfg = require_isaaclab()
        cfg = parse_env_cfg(spec.env_id, device=device, num_envs=num_envs)
        cfg.seed = seed
        self.spec = spec
        self.env: Any = gym.make(spec.env_id, cfg=cfg)  # its step returns tensors
        self.task = self.env.unwrapped
        self.num_envs = num_envs
        self.device = device
        self.observation_space = gym.spaces.Box(-float("inf"), float("inf"), (spec.obs_dim,))
        self.action_space = gym.spaces.Box(-1.0, 1.0, (spec.act_dim,))

    def reset(self, seed: int | None = None) -> torch.Tensor:
        obs, _ = self.env.reset(seed=seed)
        return obs["policy"]

    def step(self, action: torch.Tensor) -> VecStep:
        obs, reward, terminated, truncated, _ = self.env.step(action.to(self.device))
        policy_obs = obs["policy"]
        info = {
            key: getattr(self.task, attribute)[:, column].float()
            for key, (attribute, column) in self.spec.info_sources.items()
        }
        return VecStep(
            obs=policy_obs,
            next_obs=policy_obs,
            env_reward=reward.float(),
            terminated=terminated.bool(),
            truncated=truncated.bool(),
            info=info,
        )

    def close(self) -> None:
        self.env.close()


def make_isaaclab_backend(config: TrainConfig, num_envs: int) -> IsaacLabBackend:
    """The ``isaaclab`` entry of :data:`~langmarl.p2p.learner.vector.backend.BACKENDS`."""
    return IsaacLabBackend(get_isaaclab_spec(config.env_id), num_envs, config.seed)
