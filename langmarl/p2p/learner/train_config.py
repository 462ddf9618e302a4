"""``TrainConfig``: one PPO training run, with per-environment presets.

Defaults live here only; the executor, the loop, the CLI and the docs read them from this class.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from langmarl.core.validation import validate_model
from langmarl.p2p.reward.isaaclab_specs import ISAACLAB_PRESETS, Simulator, simulator_problem


class TrainConfig(BaseModel):
    """Hyperparameters of one PPO run (stable-baselines3) on a Gymnasium MuJoCo env."""

    model_config = ConfigDict(extra="forbid")

    env_id: str = "HalfCheetah-v5"
    """Gymnasium id of the MuJoCo environment (an ``Isaac-*`` task for IsaacLab)."""
    simulator: Simulator = "mujoco"
    """Where the envs step: ``mujoco`` (one Gymnasium env per process, SB3's own vec envs),
    ``gym_vector`` (Gymnasium's SyncVectorEnv of ``num_envs`` MuJoCo envs in one process, the
    reward applied to the batch: the vector path on the CPU) or ``isaaclab`` (an IsaacLab task on
    the GPU; needs the ``isaaclab`` extra, an NVIDIA GPU and Isaac Sim). See
    :mod:`langmarl.p2p.learner.vector`."""
    total_timesteps: int = Field(default=1_000_000, ge=1)
    """Environment steps to train for (summed over ``num_envs``)."""
    learning_rate: float = Field(default=3e-4, gt=0)
    """Adam learning rate."""
    gamma: float = Field(default=0.99, gt=0, le=1)
    """Discount factor."""
    gae_lambda: float = Field(default=0.95, ge=0, le=1)
    """GAE lambda."""
    num_steps: int = Field(default=2048, ge=8)
    """Rollout length per environment before each update (SB3 ``n_steps``)."""
    num_envs: int = Field(default=1, ge=1)
    """Parallel environments (a SubprocVecEnv when > 1 with ``simulator='mujoco'``; the batch
    size of the vector simulators)."""
    batch_size: int = Field(default=64, ge=2)
    """Minibatch size."""
    n_epochs: int = Field(default=10, ge=1)
    """Optimisation epochs per rollout."""
    clip_range: float = Field(default=0.2, gt=0, le=1)
    """PPO clipping range."""
    ent_coef: float = Field(default=0.0, ge=0)
    """Entropy bonus coefficient."""
    vf_coef: float = Field(default=0.5, ge=0)
    """Value loss coefficient."""
    max_grad_norm: float = Field(default=0.5, gt=0)
    """Gradient clipping norm."""
    net_arch: list[int] = Field(default_factory=lambda: [64, 64])
    """Hidden layer sizes of the policy and value MLPs."""
    normalize_obs: bool = True
    """VecNormalize the observations."""
    normalize_reward: bool = True
    """VecNormalize the rewards."""
    seed: int = 1
    """Seed of the policy, the environments and the evaluation episodes."""
    num_evals: int = Field(default=5, ge=1)
    """Evaluation checkpoints spread evenly over training (the last one at the end)."""
    eval_episodes: int = Field(default=5, ge=1)
    """Episodes per evaluation checkpoint (p10 / median / p90 are taken over them)."""
    max_episode_steps: int | None = Field(default=None, ge=1)
    """Cap on episode length (None: the env's own limit, 1000 for most MuJoCo envs)."""
    record_video: bool = True
    """Render the p10 / median / p90 evaluation episodes of every checkpoint to mp4."""
    video_width: int = Field(default=320, ge=16)
    """Video frame width in pixels."""
    video_height: int = Field(default=240, ge=16)
    """Video frame height in pixels."""
    torch_threads: int = Field(default=1, ge=1)
    """torch threads of the training process (1 is fastest for small MLPs)."""

    @model_validator(mode="after")
    def _check_simulator(self) -> TrainConfig:
        problem = simulator_problem(self.env_id, self.simulator)
        if problem is not None:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _check_batch(self) -> TrainConfig:
        rollout = self.num_steps * self.num_envs
        if self.batch_size > rollout:
            raise ValueError(
                f"batch_size={self.batch_size} exceeds num_steps*num_envs={rollout}: "
                f"lower batch_size or raise num_steps"
            )
        return self

    @classmethod
    def for_env(cls, env_id: str, **overrides: Any) -> TrainConfig:
        """The preset of ``env_id`` (see ``HP_PRESETS``) with ``overrides`` applied."""
        return cls.from_dict({**HP_PRESETS.get(env_id, {}), "env_id": env_id, **overrides})

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "") -> TrainConfig:
        """Validate ``data``; errors name the field, the value and the fix."""
        return validate_model(cls, data, source)

    @classmethod
    def from_file(cls, path: str | Path) -> TrainConfig:
        """Read a JSON (or YAML) file of TrainConfig fields (omitted fields keep their
        defaults).

        Raises:
            ConfigError: naming the file if it is missing, not UTF-8, not valid JSON (with
                line and column) or holds an invalid field.
        """
        from langmarl.config.loading import read_mapping

        return cls.from_dict(read_mapping(Path(path)), source=str(path))

    def run_id(self) -> str:
        """A short name for this run: ``seed_<seed>``."""
        return f"seed_{self.seed}"


HP_PRESETS: dict[str, dict[str, Any]] = {
    # rl-zoo style settings for 1M-step runs; the loop scales total_timesteps down.
    "HalfCheetah-v5": {"batch_size": 64, "n_epochs": 10, "learning_rate": 3e-4, "gamma": 0.99},
    "Hopper-v5": {"batch_size": 64, "n_epochs": 10, "learning_rate": 3e-4, "gamma": 0.999},
    "Walker2d-v5": {"batch_size": 64, "n_epochs": 10, "learning_rate": 3e-4, "gamma": 0.99},
    "Ant-v5": {"batch_size": 64, "n_epochs": 10, "learning_rate": 3e-4, "gamma": 0.99},
    "Humanoid-v5": {
        "batch_size": 256,
        "n_epochs": 10,
        "learning_rate": 3e-5,
        "net_arch": [256, 256],
    },
    "Swimmer-v5": {"gamma": 0.9999, "batch_size": 64},
    "Reacher-v5": {"num_steps": 512, "batch_size": 64, "gamma": 0.9},
    "InvertedPendulum-v5": {"num_steps": 512, "batch_size": 64, "gamma": 0.98, "n_epochs": 20},
    **ISAACLAB_PRESETS,  # simulator='isaaclab', a GPU-sized batch (p2p.reward.isaaclab_specs)
}
"""Per-env overrides of the TrainConfig defaults."""

HP_BOUNDS: dict[str, tuple[float, float]] = {
    "learning_rate": (1e-5, 3e-3),
    "ent_coef": (0.0, 0.05),
    "gamma": (0.9, 0.9999),
    "gae_lambda": (0.8, 1.0),
    "clip_range": (0.05, 0.4),
    "n_epochs": (1, 30),
    "vf_coef": (0.1, 1.0),
}
"""Hyperparameters the reviser may change, with the range each is clamped into."""
