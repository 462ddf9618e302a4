"""Held-out evaluation of a run's policies (``langmarl eval``)."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

from langmarl.config.loading import CONFIG_KINDS
from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import ConfigError, LLMError
from langmarl.core.records import Policies, Trajectory
from langmarl.envs.registry import make_env
from langmarl.llm.client import LLMClient, run_sync
from langmarl.llm.tracker import UsageLedger
from langmarl.store import LocalStore, PolicyCheckpoint


async def run_episodes(
    env: BaseEnvironment, policies: Policies, tasks: list[dict[str, Any]], workers: int
) -> list[Trajectory]:
    """One episode per task, at most ``workers`` at a time; an episode whose LLM calls
    fail after retries scores 0 with ``metadata["error"]``."""
    semaphore = asyncio.Semaphore(max(1, workers))

    async def one(task: dict[str, Any]) -> Trajectory:
        async with semaphore:
            try:
                return await env.acollect_trajectory(policies, task)
            except LLMError as exc:
                return Trajectory(task=task, metadata={"error": str(exc)})

    return list(await asyncio.gather(*(one(task) for task in tasks)))


def _tasks(env: BaseEnvironment, split: str, episodes: int | None, default: int) -> list[Any]:
    splits = getattr(env, "splits", None)
    if isinstance(splits, dict) and split in splits:
        tasks = list(splits[split])
        return tasks[:episodes] if episodes is not None else tasks
    return env.sample_tasks(episodes or default, split=split, rng=random.Random(0))


def evaluate_run(
    run_dir: str | Path,
    split: str = "test",
    iteration: int | None = None,
    episodes: int | None = None,
) -> dict[str, Any]:
    """Evaluate the policies of checkpoint ``iteration`` (default: the newest) of the run
    in ``run_dir`` on the ``split`` tasks, and store the result in the run as
    ``evals/<split>_iter_NNNN.json``.

    Args:
        run_dir: The run's directory (``<experiment_dir>/<run_id>``).
        split: Task split (``test`` holds tasks never used in training).
        iteration: Checkpoint to evaluate (0 = the starting policies).
        episodes: At most this many tasks (default: the whole split).

    Returns:
        ``split``, ``iteration``, ``num_episodes``, ``avg_reward``, ``rewards``,
        ``task_ids`` and ``usage_by_role``.

    Raises:
        ConfigError: if ``run_dir`` is not a run or the checkpoint does not exist.
    """
    path = Path(run_dir)
    store, run_id = LocalStore(path.parent), path.name
    info = store.run_info(run_id)
    data = store.read_json(run_id, "config.json")
    if data is None:
        raise ConfigError(f"{path} has no config.json; is it a langmarl run directory?")
    config = CONFIG_KINDS.get(str(data.get("env", "language"))).from_dict(data)
    ledger = UsageLedger()
    env = make_env(config.env, config)
    env.set_llm(LLMClient(config.get_actor_llm(), role="actor", ledger=ledger))
    if getattr(env, "judge_llm", "absent") is None:
        env.judge_llm = LLMClient(config.get_critic_llm(), role="judge", ledger=ledger)
    checkpoint = PolicyCheckpoint(store, run_id, len(env.agent_ids), agent_ids=env.agent_ids)
    chosen = checkpoint.latest_iteration() if iteration is None else iteration
    if chosen is None:
        raise ConfigError(f"Run {run_id!r} has no policy checkpoint yet; train it first.")
    policies = checkpoint.get_policies(chosen)
    tasks = _tasks(env, split, episodes, int(config.trajectories_per_iteration))
    workers = int(getattr(config, "episode_generation_workers", config.max_workers))
    started = time.monotonic()
    trajectories = run_sync(run_episodes(env, policies, tasks, workers))
    rewards = [t.reward for t in trajectories]
    result = {
        "run_id": run_id,
        "split": split,
        "iteration": chosen,
        "num_episodes": len(trajectories),
        "avg_reward": sum(rewards) / len(rewards) if rewards else 0.0,
        "rewards": rewards,
        "task_ids": [t.task.get("id") for t in trajectories],
        "usage_by_role": ledger.by_role(),
        "duration_s": round(time.monotonic() - started, 3),
        "run_status": info.get("status"),
    }
    record = {**result, "trajectories": [t.to_dict() for t in trajectories]}
    store.write_json(run_id, f"evals/{split}_iter_{chosen:04d}.json", record)
    return result
