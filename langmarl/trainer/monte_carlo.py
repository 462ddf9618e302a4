"""`MonteCarloTrainer`: five-phase language-space training with crash-safe resume.

One iteration:

1. **load** the policies of checkpoint ``i`` (the policies after ``i`` iterations);
2. **generate** ``trajectories_per_iteration`` episodes concurrently (episodes already
   stored by an interrupted attempt of this iteration are reused);
3. **evaluate** a mini-batch with the critic and generate language gradients, every call
   concurrent (bounded by the config's worker limits);
4. **update**: aggregate each agent's gradients and propose candidate policies (all agents
   at once); with ``validate_updates`` (the default) a candidate replaces a policy only if
   the team scores at least as well with it on the run's validation batch (progress phase
   ``validate``, see :mod:`langmarl.trainer.validation`), so the kept policies are the best
   so far; every decision goes to ``updates.jsonl``;
5. **checkpoint**: save the kept policies with the iteration's statistics as checkpoint
   ``i + 1``. The checkpoint's manifest is written last; it is what marks the iteration done.

``train`` resumes the run in its directory from the newest checkpoint, so an iteration is
never skipped nor counted twice, whatever moment the process was killed at; the run's lock
(:class:`langmarl.store.RunLock`) keeps a second process from training it at the same time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

from langmarl.config.base import BaseConfig
from langmarl.core.aio import run_sync
from langmarl.core.base import BaseCritic, BaseEnvironment, BaseOptimizer, BaseReward
from langmarl.core.errors import ConfigError, LangmarlError, LLMError
from langmarl.core.records import Evaluation, Gradient, Policies, PolicyUpdate, Trajectory
from langmarl.core.secrets import redacting_logs
from langmarl.llm.tracker import UsageLedger
from langmarl.store import LocalStore, PolicyCheckpoint, RunLogger, TrajectoryStore
from langmarl.textgrad.grounding import check_grounding
from langmarl.tracking.export import MetricsFollower, reporting
from langmarl.trainer.callbacks import Callback, LoggingCallback
from langmarl.trainer.clients import RoleClients
from langmarl.trainer.decisions import DecisionLog, check_validation_size
from langmarl.trainer.health import check_failures
from langmarl.trainer.phase_host import PhaseHooks, WorkerLimits
from langmarl.trainer.phases import PhaseRunner
from langmarl.trainer.run_files import record_config, sync_progress
from langmarl.trainer.stats import iteration_stats
from langmarl.trainer.validation import Validator

log = logging.getLogger(__name__)
T = TypeVar("T")


class MonteCarloTrainer:
    """Generic Monte Carlo trainer for any langmarl environment.

    Args:
        config: Run config (``BaseConfig`` or a subclass); its worker limits
            (``episode_generation_workers``, ``max_workers``, ``optimizer_workers``) bound
            the phases' concurrency (see :class:`~langmarl.trainer.phase_host.WorkerLimits`).
        env: The environment; its ``agent_ids`` name the policies everywhere.
        critic: Evaluates episodes.
        optimizer: Generates gradients and updates policies.
        reward_fn: Optional verified reward; replaces each episode's env reward (the env's
            is kept in ``metadata["env_reward"]``).
        store: Where the run lives (default: ``LocalStore(config.runs_dir)``).
        callbacks: Hooks (default: ``[LoggingCallback()]``).
        run_id: The run's directory name (default: ``config.chosen_run_id()``: its
            ``run_id``, else ``exp_name``). Training again with the same id resumes the run.
        ledger: Usage by role, for parts built without ``clients`` (default: the one their
            clients record into, else a new one).
        clients: The run's clients and ledger (:class:`~langmarl.trainer.clients.RoleClients`,
            as the run's assembly makes them); default: the parts' own, made to record into
            one ledger by role (:meth:`RoleClients.of_parts`).
    """

    def __init__(
        self,
        config: BaseConfig,
        env: BaseEnvironment,
        critic: BaseCritic,
        optimizer: BaseOptimizer,
        reward_fn: BaseReward | None = None,
        store: LocalStore | None = None,
        callbacks: list[Callback] | None = None,
        *,
        run_id: str | None = None,
        ledger: UsageLedger | None = None,
        clients: RoleClients | None = None,
    ) -> None:
        if not isinstance(config, BaseConfig):
            raise ConfigError(
                f"MonteCarloTrainer needs a run config (BaseConfig or a subclass), got "
                f"{type(config).__name__}; load one with langmarl.load_config(path) or build "
                "one, e.g. LanguageTaskConfig(num_iterations=3)."
            )
        self.config, self.env, self.critic, self.optimizer = config, env, critic, optimizer
        self.reward_fn = reward_fn
        self.run_id = run_id or config.chosen_run_id()
        self.store = store or LocalStore(config.runs_dir)
        self.callbacks = [LoggingCallback()] if callbacks is None else list(callbacks)
        self.clients = clients or RoleClients.of_parts(config, env, critic, optimizer, ledger)
        self.clients.equip_parts(env, critic, optimizer)
        self.ledger = self.clients.ledger
        self.store.redact.add(self.clients.secrets(config))
        env.size_team(config.num_agents)
        self.agent_ids = list(env.agent_ids)
        self.checkpoint = PolicyCheckpoint(
            self.store,
            self.run_id,
            len(self.agent_ids),
            agent_ids=self.agent_ids,
            default_policies=env.default_policies(),
        )
        self.trajectories = TrajectoryStore(self.store, self.run_id)
        self.lock = self.store.lock(self.run_id)
        self._follower: MetricsFollower | None = None
        self.logger = RunLogger(self.store, self.run_id, config.log_level)
        check_grounding(config.grounded_feedback, env)
        self.limits = WorkerLimits.from_config(config)
        self.validator = self._make_validator()
        self.decisions = DecisionLog(self.store, self.run_id)
        self.current_policies: Policies = {}
        self.stop_reason: str | None = None
        self._status = "running"
        self.seed: int = 0

    def _make_validator(self) -> Validator | None:
        """The validator of ``validate_updates`` (``None`` when off).

        Raises:
            ConfigError: if ``validation_size`` exceeds the environment's training tasks.
        """
        if not self.config.validate_updates:
            return None
        size = self.config.validation_size
        check_validation_size(self.env, size)
        return Validator(
            self.store,
            self.run_id,
            self.collect,
            size=size,
            workers=self.limits.episodes,
            rescore=self.config.rescore_incumbent,
        )

    def stop(self, reason: str) -> None:
        """Ask training to stop after the current iteration (status ``stopped``)."""
        self.stop_reason = reason

    def emit(self, hook: str, *args: Any) -> None:
        """Call ``hook`` (a :class:`Callback` method name) with ``args`` on every callback."""
        for callback in self.callbacks:
            getattr(callback, hook)(*args)

    # -- the run ----------------------------------------------------------------------------
    def _start(self, target: int) -> int:
        """Open (or resume) the run; return the first iteration still to do."""
        info = self.store.start_run(
            self.run_id,
            self.env.run_kind,
            env=self.env.name,
            agent_ids=self.agent_ids,
            paradigm=self.config.paradigm,
            target_iterations=target,
        )
        if info.get("seed") is None:
            seed = self.config.seed
            info = self.store.update_run(
                self.run_id,
                seed=seed if seed is not None else random.SystemRandom().randrange(2**31),
            )
        self.seed = int(info["seed"])
        if self.validator is not None:
            self.validator.open(self.env, self.seed)
        record_config(self.store, self.run_id, self.config.model_dump(mode="json"), self.logger)
        latest = self.checkpoint.latest_iteration()
        if latest is None:
            latest = self.config.start_iteration
            self.checkpoint.save_policies(latest, self.env.default_policies())
        self._sync_metrics()
        return latest

    def _sync_metrics(self) -> list[dict[str, Any]]:
        """Rewrite ``metrics.json`` and the run's progress from the checkpoints, and feed
        the trackers."""
        metrics = sync_progress(self.store, self.run_id, self.checkpoint)
        if self._follower is not None:
            self._follower.sync()
        return metrics

    async def atrain(self, num_iterations: int | None = None) -> list[dict[str, Any]]:
        """Async :meth:`train`."""
        target = self.config.num_iterations if num_iterations is None else num_iterations
        end = self.config.start_iteration + target

        async def run() -> str:
            first = self._start(target)
            self.emit("on_train_start", self)
            return await self._iterate(first, end)

        with (
            self.lock,
            redacting_logs(self.store.redact),  # no key in any log line either
            self._reporting(),
        ):
            self.stop_reason = None
            try:
                await self._tracked(run())
            finally:
                self.emit("on_train_end", self._status, self)
            return self._sync_metrics()

    @contextlib.contextmanager
    def _reporting(self) -> Iterator[None]:
        """Feed ``metrics.jsonl`` to the ``report_to`` trackers while training."""
        config = self.config.model_dump(mode="json")
        run_dir = self.store.run_dir(self.run_id)
        with reporting(self.config.report_to, run_dir, self.run_id, config) as follower:
            self._follower = follower
            try:
                yield
            finally:
                self._follower = None

    async def _iterate(self, first: int, end: int) -> str:
        for iteration in range(first, end):
            await self.arun_iteration(iteration)
            if self.stop_reason:
                return "stopped"
        return "completed"

    async def _tracked(self, work: Awaitable[str]) -> str:
        """Await ``work``, which returns the run's outcome (``completed`` or ``stopped``),
        and record it as the run's status (also in ``self._status``); ``stopped`` on
        interrupt, ``failed`` on any other error. When the status cannot be written (disk
        full, read-only, corrupt ``run.json``), the original error is the one raised."""
        status, error = "failed", None
        try:
            status = await work
            error = (self.stop_reason or "stopped") if status == "stopped" else None
            return status
        except (KeyboardInterrupt, asyncio.CancelledError):
            status, error = "stopped", "interrupted"
            raise
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            with contextlib.suppress(LangmarlError):
                self.logger.error(f"training failed: {error}")
            raise
        finally:
            self._status = status
            try:
                self.store.set_status(self.run_id, status, error)  # type: ignore[arg-type]
            except LangmarlError as exc:
                if error is None:
                    raise
                log.error("could not record the run's status %r: %s", status, exc)

    def train(self, num_iterations: int | None = None) -> list[dict[str, Any]]:
        """Train until ``num_iterations`` (default ``config.num_iterations``) iterations of
        the run are done, resuming from its newest checkpoint. Returns the metrics of every
        finished iteration (one stats dict each)."""
        return run_sync(self.atrain(num_iterations))

    def train_one_iteration(self, iteration: int) -> dict[str, Any]:
        """Run the five phases of ``iteration`` and return its statistics.

        Checkpoint ``iteration`` must exist, except on a run with no checkpoint yet: then the
        run is opened first, as :meth:`train` does (checkpoint ``start_iteration`` holds the
        environment's default policies), so a fresh trainer can call this directly."""
        return run_sync(self._atrain_one(iteration))

    async def _atrain_one(self, iteration: int) -> dict[str, Any]:
        with self.lock, redacting_logs(self.store.redact), self._reporting():
            return await self._atrain_one_locked(iteration)

    async def _atrain_one_locked(self, iteration: int) -> dict[str, Any]:
        start = self.config.start_iteration
        known = self.store.run_info(self.run_id) if self.store.exists(self.run_id) else {}
        target = int(known.get("target_iterations") or self.config.num_iterations)
        self._start(max(target, iteration + 1 - start))
        self.stop_reason = None
        done: list[dict[str, Any]] = []

        async def one() -> str:
            done.append(await self.arun_iteration(iteration))
            info = self.store.run_info(self.run_id)
            if info.get("completed_iterations", 0) >= info.get("target_iterations", 0):
                return "completed"
            self.stop_reason = "stopped after train_one_iteration"
            return "stopped"

        await self._tracked(one())
        return done[0]

    # -- one iteration ----------------------------------------------------------------------
    async def arun_iteration(self, iteration: int) -> dict[str, Any]:
        """Async :meth:`train_one_iteration`."""
        started, before = time.monotonic(), self.ledger.by_role()
        phases = PhaseRunner(self, iteration, PhaseHooks(self.emit, self.limits))
        self.current_policies = await phases.load()
        self.emit("on_iteration_start", iteration, self)
        trajectories = await phases.timed("generate", phases.generate(self.current_policies))
        self._check_failures(iteration, "episodes", [t.metadata.get("error") for t in trajectories])
        evaluations, gradients = await phases.timed(
            "evaluate", phases.evaluate(self.current_policies, trajectories)
        )
        self._check_failures(
            iteration, "critic evaluations", [e.error for e in evaluations.values()]
        )
        proposals = await phases.timed("update", phases.update(self.current_policies, gradients))
        self._check_failures(
            iteration,
            "policy updates",
            [u.error if u.method == "kept" else None for us in proposals.values() for u in us],
        )
        updates = await phases.timed("validate", phases.select(self.current_policies, proposals))
        usage = UsageLedger.since(before, self.ledger.by_role())
        stats = iteration_stats(
            iteration,
            self.config.paradigm,
            trajectories,
            evaluations,
            gradients,
            updates,
            usage,
        )
        return self.finish_iteration(iteration, phases, updates, stats, started)

    def finish_iteration(
        self,
        iteration: int,
        phases: PhaseRunner,
        updates: list[PolicyUpdate],
        stats: dict[str, Any],
        started: float,
    ) -> dict[str, Any]:
        """Complete ``stats`` with the phases' timings and validation counts, save
        checkpoint ``iteration + 1`` (the last step of an iteration) and tell the callbacks."""
        stats["duration_s"] = round(time.monotonic() - started, 3)
        stats["phase_seconds"] = phases.seconds
        stats["reused_episodes"] = phases.reused
        stats.update(phases.validation)
        phases.checkpoint(updates, stats)
        self._sync_metrics()
        self.emit("on_iteration_end", iteration, stats, self)
        return stats

    def _check_failures(self, iteration: int, what: str, errors: list[str | None]) -> None:
        check_failures(iteration, what, errors, self.config.max_failure_rate)

    # -- helpers used by the phases ---------------------------------------------------------
    async def bounded(
        self, limit: int, jobs: Sequence[Awaitable[T]], on_done: Callable[[], None]
    ) -> list[T]:
        """Await ``jobs`` concurrently, at most ``limit`` at a time; results in job order."""
        semaphore = asyncio.Semaphore(max(1, limit))

        async def run(job: Awaitable[T]) -> T:
            async with semaphore:
                result = await job
            on_done()
            return result

        return list(await asyncio.gather(*(run(job) for job in jobs)))

    async def collect(self, policies: Policies, task: dict[str, Any]) -> Trajectory:
        """One episode; an LLM failure after retries becomes a failed episode (reward 0,
        ``metadata["error"]``) instead of ending the run."""
        try:
            trajectory = await self.env.acollect_trajectory(policies, task)
        except LLMError as exc:
            self.logger.error(f"episode failed: {exc}")
            return Trajectory(task=task, agent_ids=self.agent_ids, metadata={"error": str(exc)})
        if not trajectory.agent_ids:
            trajectory.agent_ids = list(self.agent_ids)
        if self.reward_fn is not None and not trajectory.metadata.get("error"):
            trajectory.metadata["env_reward"] = trajectory.reward
            trajectory.reward = float(await self.reward_fn.acompute(trajectory))
        return trajectory

    def reusable_evaluation(self, iteration: int, episode_id: int) -> Evaluation | None:
        data = self.store.load_evaluation(self.run_id, iteration, episode_id)
        evaluation = Evaluation.from_dict(data) if data else None
        return evaluation if evaluation is not None and not evaluation.error else None

    def reusable_gradients(self, iteration: int, episode_id: int) -> list[Gradient] | None:
        data = self.store.load_gradients(self.run_id, iteration, episode_id)
        if not data:
            return None
        gradients = [Gradient.from_dict(g) for g in data.values()]
        return None if any(g.error for g in gradients) else gradients
