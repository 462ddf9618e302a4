"""The reward space's PPO policy: built from a run's config, saved and loaded as data.

The training process runs LLM-written reward code, so every file it writes is untrusted.
SB3's own files would run code when loaded on the host: ``PPO.save``'s ``model.zip`` holds
cloudpickled objects in its JSON and a torch pickle, ``VecNormalize.save`` is a pickle; a
reward that replaces ``pickle.dump`` during training can put anything in them. So a run
saves its policy as two data files instead:

- :data:`POLICY_FILE` (``policy.safetensors``): the PPO policy's tensors, names and numbers
  only;
- :data:`NORMALIZE_FILE` (``normalize.json``): the observation statistics it was trained
  with (mean, variance, epsilon, clip).

Loading rebuilds the network from the run's ``config.json`` (through :class:`TrainConfig`'s
validation), takes the tensors only if their names and shapes are exactly that network's,
and the statistics only if they are finite and of the observation's size; anything else is
a :class:`~langmarl.core.errors.ConfigError` naming the file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from langmarl.core.errors import ConfigError
from langmarl.core.files import atomic_write_json, load_json_file
from langmarl.p2p.learner.evaluation import Policy
from langmarl.p2p.learner.train_config import TrainConfig

POLICY_FILE = "policy.safetensors"
"""The trained PPO policy's tensors in a run directory."""
NORMALIZE_FILE = "normalize.json"
"""The observation statistics the policy was trained with."""
RETRAIN = "train that iteration again with this version (p2p resume, or a new session)"


def build_ppo(config: TrainConfig, venv: Any) -> Any:
    """An SB3 PPO model for ``config``, logging nowhere: the callback writes the run's own
    scalars, and SB3's default logger would leave an empty ``SB3-<time>`` folder in the temp
    directory on every ``learn``."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.logger import Logger

    model = PPO(
        "MlpPolicy",
        venv,
        learning_rate=config.learning_rate,
        n_steps=config.num_steps,
        batch_size=config.batch_size,
        n_epochs=config.n_epochs,
        gamma=config.gamma,
        gae_lambda=config.gae_lambda,
        clip_range=config.clip_range,
        ent_coef=config.ent_coef,
        vf_coef=config.vf_coef,
        max_grad_norm=config.max_grad_norm,
        policy_kwargs={"net_arch": list(config.net_arch)},
        seed=config.seed,
        device="cpu",
        verbose=0,
    )
    model.set_logger(Logger(folder=None, output_formats=[]))
    return model


def save_policy(model: Any, venv: Any, folder: Path) -> None:
    """Write :data:`POLICY_FILE` and :data:`NORMALIZE_FILE` for SB3 ``model`` trained in
    ``venv`` (a ``VecNormalize``). Runs inside the confined training process."""
    from safetensors.torch import save_file

    tensors = {k: v.detach().cpu().contiguous() for k, v in model.policy.state_dict().items()}
    save_file(tensors, str(folder / POLICY_FILE))
    stats = venv.obs_rms
    atomic_write_json(
        folder / NORMALIZE_FILE,
        {
            "norm_obs": bool(venv.norm_obs),
            "mean": np.asarray(stats.mean, dtype=float).tolist(),
            "var": np.asarray(stats.var, dtype=float).tolist(),
            "epsilon": float(venv.epsilon),
            "clip_obs": float(venv.clip_obs),
        },
    )


@dataclass(frozen=True)
class ObsNormalizer:
    """Raw observation -> what the policy saw in training (``VecNormalize.normalize_obs``)."""

    mean: np.ndarray
    var: np.ndarray
    epsilon: float
    clip: float

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        scaled = (obs - self.mean) / np.sqrt(self.var + self.epsilon)
        return np.clip(scaled, -self.clip, self.clip).astype(np.float32)


def read_normalizer(path: Path, size: int) -> ObsNormalizer | None:
    """The statistics in ``path`` for observations of ``size`` values (``None``: the policy
    saw raw observations).

    Raises:
        ConfigError: if the file is not such statistics.
    """
    data = load_json_file(path, fix=RETRAIN)
    fields = {"norm_obs", "mean", "var", "epsilon", "clip_obs"}
    if not isinstance(data, dict) or set(data) != fields:
        raise ConfigError(f"{str(path)!r} does not hold exactly {sorted(fields)}: {RETRAIN}")
    if data["norm_obs"] is not True:
        return None
    mean, var = (_finite_vector(path, data[key], key, size) for key in ("mean", "var"))
    epsilon, clip = (_finite_number(path, data[key], key) for key in ("epsilon", "clip_obs"))
    if (var < 0).any() or epsilon <= 0 or clip <= 0:
        raise ConfigError(f"{str(path)!r}: var, epsilon and clip_obs must be positive: {RETRAIN}")
    return ObsNormalizer(mean, var, epsilon, clip)


def _finite_vector(path: Path, value: Any, key: str, size: int) -> np.ndarray:
    if not isinstance(value, list) or len(value) != size or not all(_is_finite(v) for v in value):
        raise ConfigError(f"{str(path)!r}: {key} must be {size} finite numbers: {RETRAIN}")
    return np.asarray(value, dtype=np.float64)


def _finite_number(path: Path, value: Any, key: str) -> float:
    if not _is_finite(value):
        raise ConfigError(f"{str(path)!r}: {key} must be a finite number: {RETRAIN}")
    return float(value)


def _is_finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def load_policy(folder: Path, config: TrainConfig) -> Policy:
    """The policy saved in ``folder`` as raw obs -> deterministic action.

    Raises:
        ConfigError: if a file is missing or does not fit the network ``config`` describes.
    """
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file
    from stable_baselines3.common.vec_env import DummyVecEnv

    from langmarl.p2p.learner.wrapper import make_reward_env

    path = folder / POLICY_FILE
    shell = DummyVecEnv([lambda: make_reward_env(config.env_id, None)])
    try:
        model = build_ppo(config, shell)
        expected = {k: tuple(v.shape) for k, v in model.policy.state_dict().items()}
        try:
            tensors = load_file(str(path))
        except (SafetensorError, OSError) as exc:
            raise ConfigError(f"{str(path)!r} is not a readable safetensors file ({exc}): "
                              f"{RETRAIN}") from None  # fmt: skip
        found = {k: tuple(v.shape) for k, v in tensors.items()}
        if found != expected or any(v.dtype != torch.float32 for v in tensors.values()):
            raise ConfigError(
                f"{str(path)!r} does not hold the float32 tensors of the {list(config.net_arch)} "
                f"network its config.json describes: {RETRAIN}"
            )
        model.policy.load_state_dict(tensors)
        size = int(np.prod(shell.observation_space.shape or ()))
    finally:
        shell.close()
    normalize = read_normalizer(folder / NORMALIZE_FILE, size)

    def policy(obs: np.ndarray) -> np.ndarray:
        seen = normalize(obs) if normalize is not None else obs
        action, _ = model.predict(seen, deterministic=True)
        return np.asarray(action)

    return policy
