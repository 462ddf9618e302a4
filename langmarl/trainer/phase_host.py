"""What the phases of an iteration get from their trainer (:mod:`langmarl.trainer.phases`):
the worker limits, the hooks they call back into, and the trainer's parts they use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from langmarl.core.records import Evaluation, Gradient, Policies, Trajectory
from langmarl.trainer.decisions import DecisionLog
from langmarl.trainer.validation import Validator

if TYPE_CHECKING:
    from langmarl.config.base import BaseConfig
    from langmarl.core.base import BaseCritic, BaseEnvironment, BaseOptimizer
    from langmarl.store import LocalStore, PolicyCheckpoint, RunLogger, TrajectoryStore

T = TypeVar("T")


@dataclass(frozen=True)
class WorkerLimits:
    """How many calls of each kind run at once in an iteration.

    Attributes:
        episodes: Concurrent episodes in ``generate`` and ``validate``
            (``episode_generation_workers``).
        evaluations: Concurrent critic evaluations in ``evaluate`` (``max_workers``).
        optimizer: Concurrent optimizer calls: gradients (in ``evaluate``), aggregations and
            candidate updates (in ``update``) (``optimizer_workers``).
    """

    episodes: int
    evaluations: int
    optimizer: int

    @classmethod
    def from_config(cls, config: BaseConfig) -> WorkerLimits:
        """The limits a run config sets."""
        return cls(
            episodes=config.episode_generation_workers,
            evaluations=config.max_workers,
            optimizer=config.optimizer_workers,
        )


@dataclass(frozen=True)
class PhaseHooks:
    """What the phases call back into.

    Attributes:
        emit: ``emit(hook, *args)`` calls ``hook`` (a :class:`~langmarl.trainer.callbacks.
            Callback` method name) on every callback of the run.
        limits: The worker limits.
    """

    emit: Callable[..., None]
    limits: WorkerLimits


class PhaseHost(Protocol):
    """The parts of a trainer the phases use (``MonteCarloTrainer`` has them all)."""

    config: BaseConfig
    env: BaseEnvironment
    critic: BaseCritic
    optimizer: BaseOptimizer
    run_id: str
    store: LocalStore
    checkpoint: PolicyCheckpoint
    trajectories: TrajectoryStore
    logger: RunLogger
    decisions: DecisionLog
    validator: Validator | None
    agent_ids: list[str]
    seed: int

    async def bounded(
        self, limit: int, jobs: Sequence[Awaitable[T]], on_done: Callable[[], None]
    ) -> list[T]: ...

    async def collect(self, policies: Policies, task: dict[str, Any]) -> Trajectory: ...

    def reusable_evaluation(self, iteration: int, episode_id: int) -> Evaluation | None: ...

    def reusable_gradients(self, iteration: int, episode_id: int) -> list[Gradient] | None: ...
