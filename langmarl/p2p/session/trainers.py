"""How a session trains and validates its rewards by default: the :data:`Trainer` contract,
executor processes or jobs on the session's backend, and the sandboxed validator."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from langmarl.p2p.learner.executor import train_runs
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.reward.validation import ValidationResult, validate_reward_code
from langmarl.p2p.session.contracts import IterationAggregation
from langmarl.p2p.session.records import IterationRecord

if TYPE_CHECKING:
    from langmarl.p2p.session.config import LoopConfig

Trainer = Callable[[IterationRecord, Path, list[TrainConfig], list[int]], IterationAggregation]
"""(iteration, reward file, configs, seeds) -> aggregation; executor processes by default. A
trainer whose runs may outlive a killed session also has ``stop_leftovers(iteration)``,
called before an iteration is trained (again), and one that trains in worker threads (a
search's candidates at once) ``interrupt()``, which stops every call (its processes killed)
when the session is interrupted."""


def default_validator(source: str, env_id: str) -> ValidationResult:
    """The sandboxed :func:`validate_reward_code`."""
    return validate_reward_code(source, env_id)


def default_trainer(config: LoopConfig) -> Trainer:
    """Executor processes (:func:`train_runs`) with the session's parallelism and timeout,
    or jobs on the session's backend (:mod:`langmarl.p2p.learner.fanout`)."""
    if config.backend != "process":
        from langmarl.p2p.learner.fanout import JobsTrainer  # the jobs machinery, when asked

        return JobsTrainer(config)
    stop = threading.Event()

    def trainer(
        it: IterationRecord, reward: Path, configs: list[TrainConfig], seeds: list[int]
    ) -> IterationAggregation:
        return train_runs(
            it,
            reward,
            configs,
            seeds,
            max_parallel=config.max_parallel,
            timeout_s=config.train_timeout_s,
            stop=stop,
        )

    trainer.interrupt = stop.set  # type: ignore[attr-defined]
    return trainer
