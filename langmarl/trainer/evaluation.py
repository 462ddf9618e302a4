"""Held-out evaluation of a run's policies (``langmarl eval``).

:func:`compare_run` evaluates the starting policies and the final ones (the newest
checkpoint: with validated updates, the best so far) on the same held-out tasks, each with n
and a 95% interval (:mod:`langmarl.core.intervals`); :func:`evaluate_run` evaluates one
checkpoint. :func:`evaluate_language` is the language kinds' ``evaluate`` entry point
(:mod:`langmarl.store.kinds`): it returns the comparison as a :class:`HeldoutComparison`,
which ``langmarl eval`` (and any other caller) only renders.

Decisions:

- A run with no trained iteration yet, or whose updates were all rejected, has final
  policies equal to the initial ones: they are evaluated once and the report says so
  (``note``) instead of failing.
- Episodes whose LLM calls fail after retries score 0 and are counted in
  ``failed_episodes``, so a flaky endpoint shows instead of silently shrinking n.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langmarl.config.base import BaseConfig
from langmarl.config.loading import config_from_dict
from langmarl.core.aio import run_sync
from langmarl.core.base import BaseEnvironment, Exploring, StepAware
from langmarl.core.errors import ConfigError, LLMError
from langmarl.core.intervals import ScoreInterval, heldout_line, score_interval
from langmarl.core.records import Policies, Trajectory
from langmarl.llm.tracker import UsageLedger
from langmarl.store import LocalStore, PolicyCheckpoint
from langmarl.store.kinds import EvalRequest
from langmarl.trainer.assembly import assemble_env
from langmarl.trainer.clients import RoleClients


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
    if env.splits is not None and split in env.splits:
        tasks = list(env.splits[split])
        return tasks[:episodes] if episodes is not None else tasks
    return env.sample_tasks(episodes or default, split=split, rng=random.Random(0))


@dataclass
class OpenedRun:
    """A run directory opened for evaluation: its store, config, a fresh environment with
    actor (and judge) clients recording into ``ledger``, and its checkpoints."""

    store: LocalStore
    run_id: str
    info: dict[str, Any]
    config: BaseConfig
    env: BaseEnvironment
    ledger: UsageLedger
    checkpoint: PolicyCheckpoint

    @classmethod
    def open(cls, run_dir: str | Path) -> OpenedRun:
        """Open ``run_dir``.

        Raises:
            ConfigError: if ``run_dir`` is not a run, or has no checkpoint yet.
        """
        path = Path(run_dir)
        store, run_id = LocalStore(path.parent), path.name
        info = store.run_info(run_id)
        data = store.read_json(run_id, "config.json")
        if data is None:
            raise ConfigError(f"{path} has no config.json; is it a langmarl run directory?")
        config = config_from_dict(data)
        clients = RoleClients.from_config(config)
        ledger = clients.ledger
        env = assemble_env(config, clients)
        if isinstance(env, StepAware):  # e.g. PARL's λ: every checkpoint scored alike, at
            env.set_step(int(config.num_iterations))  # the end of training's schedule
        checkpoint = PolicyCheckpoint(store, run_id, len(env.agent_ids), agent_ids=env.agent_ids)
        if checkpoint.latest_iteration() is None:
            raise ConfigError(f"Run {run_id!r} has no policy checkpoint yet; train it first.")
        return cls(store, run_id, info, config, env, ledger, checkpoint)

    def evaluate(self, iteration: int, split: str, episodes: int | None) -> dict[str, Any]:
        """Evaluate checkpoint ``iteration`` on ``split`` and save it in the run as
        ``evals/<split>_iter_NNNN.json``; returns the result without the trajectories."""
        policies = self.checkpoint.get_policies(iteration)
        tasks = _tasks(self.env, split, episodes, int(self.config.trajectories_per_iteration))
        if not tasks:
            raise ConfigError(
                f"Split {split!r} of run {self.run_id!r} has no tasks (episodes={episodes}); "
                "use another --split or a larger --episodes."
            )
        workers = self.config.episode_generation_workers
        before, started = self.ledger.by_role(), time.monotonic()
        trajectories = run_sync(run_episodes(self.env, policies, tasks, workers))
        rewards = [t.reward for t in trajectories]
        result = {
            "run_id": self.run_id,
            "split": split,
            "iteration": iteration,
            "num_episodes": len(trajectories),
            "avg_reward": sum(rewards) / len(rewards),
            "interval": score_interval(rewards, bounds=self.env.reward_range).model_dump(),
            "failed_episodes": sum(1 for t in trajectories if t.metadata.get("error")),
            "rewards": rewards,
            "task_ids": [t.task.get("id") for t in trajectories],
            "usage_by_role": UsageLedger.since(before, self.ledger.by_role()),
            "duration_s": round(time.monotonic() - started, 3),
            "run_status": self.info.get("status"),
        }
        record = {**result, "trajectories": [t.to_dict() for t in trajectories]}
        self.store.write_json(self.run_id, f"evals/{split}_iter_{iteration:04d}.json", record)
        return result


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
        run_dir: The run's directory (``<runs_dir>/<run_id>``).
        split: Task split (``test`` holds tasks never used in training).
        iteration: Checkpoint to evaluate (0 = the starting policies).
        episodes: At most this many tasks (default: the whole split).

    Returns:
        ``split``, ``iteration``, ``num_episodes``, ``avg_reward``, ``interval`` (95%, see
        :class:`~langmarl.core.intervals.ScoreInterval`), ``failed_episodes``,
        ``rewards``, ``task_ids`` and ``usage_by_role``.

    Raises:
        ConfigError: if ``run_dir`` is not a run or the checkpoint does not exist.
    """
    run = OpenedRun.open(run_dir)
    chosen = run.checkpoint.iterations()[-1] if iteration is None else iteration
    run.checkpoint.manifest(chosen)  # a missing checkpoint: the "available: ..." message
    return run.evaluate(chosen, split, episodes)


def compare_run(
    run_dir: str | Path,
    split: str = "test",
    iteration: int | None = None,
    episodes: int | None = None,
) -> dict[str, Any]:
    """Evaluate the initial and the final policies of the run in ``run_dir`` on the same
    ``split`` tasks; saved as ``evals/<split>_compare.json`` (and each checkpoint's own
    ``evals/<split>_iter_NNNN.json``).

    Args:
        run_dir: The run's directory.
        split: Task split (``test``: tasks never used in training).
        iteration: The "final" checkpoint (default: the newest, i.e. the kept policies).
        episodes: At most this many tasks.

    Returns:
        ``run_id``, ``split``, ``initial`` and ``final`` (each as :func:`evaluate_run`
        returns it), ``difference`` (final minus initial mean), ``same_policies`` and
        ``note`` (why initial and final are the same, else ``None``).

    Raises:
        ConfigError: if ``run_dir`` is not a run, a checkpoint does not exist or
            ``episodes`` is below 1.
    """
    if episodes is not None and episodes < 1:
        raise ConfigError(f"episodes must be at least 1 (got {episodes}); omit it for all tasks")
    run = OpenedRun.open(run_dir)
    done = run.checkpoint.iterations()
    first = done[0]
    last = done[-1] if iteration is None else iteration
    run.checkpoint.manifest(last)  # a missing checkpoint: the "available: ..." message
    same = run.checkpoint.get_policies(first) == run.checkpoint.get_policies(last)
    initial = run.evaluate(first, split, episodes)
    final = initial if same else run.evaluate(last, split, episodes)
    if same and last != first:  # the final checkpoint's file too, as if evaluated alone
        record = run.store.read_json(run.run_id, f"evals/{split}_iter_{first:04d}.json")
        run.store.write_json(
            run.run_id, f"evals/{split}_iter_{last:04d}.json", {**record, "iteration": last}
        )
    note = None
    if last == first:
        note = f"checkpoint {last} is the starting one: the run has no trained iteration yet"
    elif same:
        note = f"checkpoint {last} has the starting policies: no update was accepted"
    result = {
        "run_id": run.run_id,
        "split": split,
        "env": run.config.env,
        "greedy": isinstance(run.env, Exploring),  # answers greedily unless exploring
        "initial": initial,
        "final": {**final, "iteration": last},
        "difference": final["avg_reward"] - initial["avg_reward"],
        "same_policies": same,
        "note": note,
    }
    run.store.write_json(run.run_id, f"evals/{split}_compare.json", result)
    return result


@dataclass(frozen=True)
class CheckpointScore:
    """One checkpoint's held-out score, as ``evals/<split>_iter_NNNN.json`` holds it (less
    the episodes)."""

    iteration: int
    interval: ScoreInterval
    """Mean reward with its 95% interval and n."""
    failed_episodes: int = 0
    """Episodes whose LLM calls failed after retries (scored 0)."""
    num_episodes: int = 0
    task_ids: tuple[Any, ...] = ()

    @classmethod
    def from_result(cls, result: dict[str, Any]) -> CheckpointScore:
        """From one checkpoint's result dict (:meth:`OpenedRun.evaluate`)."""
        return cls(
            iteration=int(result["iteration"]),
            interval=ScoreInterval.model_validate(result["interval"]),
            failed_episodes=int(result.get("failed_episodes", 0)),
            num_episodes=int(result.get("num_episodes", result["interval"]["n"])),
            task_ids=tuple(result.get("task_ids", ())),
        )


@dataclass(frozen=True)
class HeldoutComparison:
    """A language run's initial vs final policies on one split (:func:`compare_run`)."""

    run_id: str
    split: str
    initial: CheckpointScore
    final: CheckpointScore
    difference: float = 0.0
    """Final minus initial mean reward."""
    env: str = ""
    greedy: bool = False
    """Whether the env's actors answered greedily (envs that sample only while exploring)."""
    note: str | None = None
    """Why initial and final are the same policies, if they are."""
    saved_to: Path | None = None
    """The comparison's file in the run (``evals/<split>_compare.json``)."""

    @classmethod
    def from_result(cls, result: dict[str, Any], saved_to: Path | None = None) -> HeldoutComparison:
        """From a :func:`compare_run` result."""
        return cls(
            run_id=str(result["run_id"]),
            split=str(result["split"]),
            initial=CheckpointScore.from_result(result["initial"]),
            final=CheckpointScore.from_result(result["final"]),
            difference=float(result["difference"]),
            env=str(result.get("env", "")),
            greedy=bool(result.get("greedy")),
            note=result.get("note"),
            saved_to=saved_to,
        )

    def headline(self) -> str:
        """The :func:`~langmarl.core.intervals.heldout_line` of the comparison."""
        split = "" if self.split == "test" else f" {self.split}"
        what = f"{self.env}{split}".strip()
        return heldout_line(self.initial.interval, self.final.interval, what, self.greedy)


def evaluate_language(run_dir: str | Path, request: EvalRequest) -> HeldoutComparison:
    """A language run's initial vs final policies on ``request.split`` (``request.iteration``:
    the final checkpoint, default the newest; ``request.episodes``: at most this many tasks),
    saved in the run as :func:`compare_run` saves it.

    Raises:
        ConfigError: as :func:`compare_run`.
    """
    split = request.split
    result = compare_run(run_dir, split, request.iteration, request.episodes)
    return HeldoutComparison.from_result(result, Path(run_dir) / "evals" / f"{split}_compare.json")
