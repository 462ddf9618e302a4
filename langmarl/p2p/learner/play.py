"""Play a trained reward-space policy (``langmarl p2p play RUN_DIR [--episodes N] [--video F]``).

A training run saves its PPO policy as data, ``policy.safetensors`` and ``normalize.json``
(:mod:`langmarl.p2p.learner.ppo_policy`; the run's process ran LLM-written code, so nothing it wrote
is unpickled here). This module loads them into the run's environment and rolls out
deterministic episodes, optionally rendering them to one mp4.

Decided edge cases:

* An iteration trained over several configs x seeds holds no model itself: the run its
  ``aggregation.json`` judged (the median run) is played, as the judge saw it.
* Episodes score the environment's own reward. The run's reward is LLM-written code that
  only ever runs inside the training sandbox; playing must not execute it on the host.
* Episode ``i`` is seeded ``seed + i`` (``--seed``, default the run's evaluation seeds'
  base ``config.seed * 1000``), so a replay with the same options is the same.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.p2p.learner.evaluation import run_episode, simplify_rendering, write_video
from langmarl.p2p.learner.ppo_policy import POLICY_FILE, load_policy
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.wrapper import make_reward_env
from langmarl.p2p.session.iteration_record import IterationRecord


@dataclass
class PlayResult:
    """What :func:`play` rolled out."""

    run_dir: Path
    """The run whose policy was played."""
    env_id: str
    returns: list[float]
    """Environment return per episode."""
    lengths: list[int]
    """Steps per episode."""
    video: Path | None
    """The mp4 written (None without ``video``)."""


def find_policy_run(path: Path) -> IterationRecord:
    """The run directory holding the policy to play for ``path`` (a run or iteration dir).

    Raises:
        ConfigError: if neither ``path`` nor the run its aggregation names holds a model.
    """
    record = IterationRecord(path)
    if (path / POLICY_FILE).is_file():
        return record
    judged = record.judged_run()
    if judged is not record and (judged.path / POLICY_FILE).is_file():
        return judged
    if (path / "model.zip").is_file():
        raise ConfigError(
            f"{str(path)!r} holds an SB3 model.zip from an earlier version: a pickle written "
            "by the process that ran LLM-written reward code, which langmarl does not load "
            f"outside the sandbox. Train the iteration again to get {POLICY_FILE}."
        )
    holders = sorted(str(p.parent) for p in path.glob(f"*/{POLICY_FILE}"))
    hint = f"; these hold one: {', '.join(holders[:5])}" if holders else ""
    raise ConfigError(
        f"{str(path)!r} holds no {POLICY_FILE}: give an iteration or run directory of a "
        f"reward-space session trained with this version (e.g. runs/<session>/iter_1){hint}"
    )


def play(
    path: str | Path,
    episodes: int = 1,
    video: str | Path | None = None,
    seed: int | None = None,
) -> PlayResult:
    """Roll out ``episodes`` deterministic episodes of the policy saved under ``path``.

    Args:
        path: A run or iteration directory (see :func:`find_policy_run`).
        episodes: Episodes to play.
        video: Write every episode, one after the other, to this mp4.
        seed: Seed of the first episode (default ``config.seed * 1000``).

    Raises:
        ConfigError: if no policy is found or the run's config.json is missing.
    """
    record = find_policy_run(Path(path))
    data = record.read_config()
    if data is None:
        raise ConfigError(f"{str(record.config_path)!r} is missing: cannot rebuild the env")
    config = TrainConfig.from_dict(data, str(record.config_path))
    policy = load_policy(record.path, config)
    if video is not None:
        os.environ.setdefault("MUJOCO_GL", "egl")  # headless rendering, as in training
    env = _env(config, render=video is not None)
    first = config.seed * 1000 if seed is None else seed
    try:
        played = [run_episode(env, policy, first + i, render=video is not None)
                  for i in range(episodes)]  # fmt: skip
        fps = int(env.metadata.get("render_fps", 30))
    finally:
        env.close()
    if video is not None:
        write_video(Path(video), [frame for ep in played for frame in ep.frames], fps)
    return PlayResult(
        run_dir=record.path,
        env_id=config.env_id,
        returns=[ep.total for ep in played],
        lengths=[len(ep.rewards) for ep in played],
        video=Path(video) if video is not None else None,
    )


def _env(config: TrainConfig, render: bool) -> Any:
    env = make_reward_env(
        config.env_id, None, max_episode_steps=config.max_episode_steps, render=render,
        width=config.video_width, height=config.video_height,
    )  # fmt: skip
    if render:
        simplify_rendering(env)
    return env
