"""An iteration's configs x seeds trained as jobs (``LoopConfig.backend`` ``local`` or ``ray``).

::

    for each config i, seed s: submit a p2p_train job named config_<i>_seed_<s>
        (records in <iteration>/runs/.jobs, runs in <iteration>/runs/<job id>)
    wait for every job         (a failed or cancelled job's error becomes its run's error)
    aggregate                  (as the process path: per config, then the judged run)

The session's default trainer (:func:`~langmarl.p2p.session.trainers.default_trainer`) builds
a :class:`JobsTrainer` for ``backend`` local or ray; jobs sit below the spaces. Each job runs
``langmarl p2p train-run`` (:mod:`~langmarl.p2p.learner.train_job`), which trains in one
confined executor process, so the reward is confined on every backend.
Local jobs are pinned to free cores among those this process may use (a session itself
running as a job with four cores trains on those four); Ray reserves ``cpus_per_run`` per
job and spreads them over its nodes.

A session interrupted while its jobs run (Ctrl-C, SIGTERM, an error) cancels every job it
submitted and waits for them, so no training outlives it; a search training its candidates
in worker threads interrupts each call through :meth:`JobsTrainer.interrupt`. A session
killed outright leaves its jobs to finish; :func:`stop_leftover_jobs` cancels them when the
iteration is trained again.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from langmarl.jobs.backend import Backend, open_backend
from langmarl.jobs.process import GRACE_S
from langmarl.jobs.records import JOBS_DIR, JobRecord, JobStore
from langmarl.jobs.spec import JobSpec, Resources
from langmarl.p2p.learner.executor import RunSpec, aggregate
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.train_job import KIND
from langmarl.p2p.session.contracts import IterationAggregation
from langmarl.p2p.session.iteration_record import IterationRecord

if TYPE_CHECKING:  # the session's settings are read, not built, here
    from langmarl.p2p.session.config import LoopConfig

logger = logging.getLogger(__name__)
STOP_POLL_S = 1.0
"""How often a call waiting on its jobs looks whether it was interrupted."""


class JobsTrainer:
    """A session's trainer (:data:`~langmarl.p2p.session.trainers.Trainer`) for ``backend``
    local or ray: each config x seed a job (:func:`train_as_jobs`)."""

    def __init__(self, config: LoopConfig) -> None:
        self.config = config
        self.stop = threading.Event()

    def __call__(
        self, it: IterationRecord, reward: Path, configs: list[TrainConfig], seeds: list[int]
    ) -> IterationAggregation:
        return train_as_jobs(
            it, reward, configs, seeds, iteration_backend(self.config, it),
            cpus=self.config.cpus_per_run, timeout_s=self.config.train_timeout_s,
            stop=self.stop,
        )  # fmt: skip

    def interrupt(self) -> None:
        """Stop every call (a search's candidates train in worker threads): each cancels
        its jobs and raises :class:`KeyboardInterrupt`."""
        self.stop.set()

    def stop_leftovers(self, it: IterationRecord) -> None:
        """Before ``it`` is trained again: cancel the jobs an earlier attempt left."""
        stop_leftover_jobs(self.config, it)


def iteration_backend(config: LoopConfig, iteration: IterationRecord) -> Backend:
    """The session's job backend over ``iteration``'s runs directory."""
    return open_backend(config.backend, iteration.runs_dir, config.ray_address)


def train_as_jobs(
    iteration: IterationRecord,
    reward_path: Path,
    configs: list[TrainConfig],
    seeds: list[int],
    backend: Backend,
    *,
    cpus: int = 1,
    timeout_s: float = 3600.0,
    stop: threading.Event | None = None,
) -> IterationAggregation:
    """Train every config x seed as a ``p2p_train`` job on ``backend`` and aggregate them.

    Args:
        iteration: The iteration directory (its ``runs/`` holds the jobs' runs).
        reward_path: The validated reward file (sent to the jobs as text).
        configs: Train configs (each run once per seed).
        seeds: Seeds.
        backend: Where the jobs run (its runs directory: ``iteration.runs_dir``).
        cpus: Cores each job reserves.
        timeout_s: Wall-clock limit of each run's training.
        stop: Set from another thread to cancel the jobs and raise
            :class:`KeyboardInterrupt` (what Ctrl-C does to a call in the main thread).
    """
    source = reward_path.read_text(encoding="utf-8")
    submitted: dict[str, RunSpec] = {}
    try:
        for index, base in enumerate(configs):
            for seed in seeds:
                name = f"config_{index}_seed_{seed}"
                config = base.model_copy(update={"seed": seed})
                job = JobSpec(
                    kind=KIND, name=name, seed=seed, resources=Resources(cpus=cpus),
                    config={"reward_source": source, "train": config.model_dump(),
                            "timeout_s": timeout_s},
                )  # fmt: skip
                job_id = backend.submit(job)
                record = IterationRecord(iteration.runs_dir / job_id, iteration.redact)
                submitted[job_id] = RunSpec(job_id, record, config, index)
        ended = {job_id: _wait(backend, job_id, stop) for job_id in submitted}
    except BaseException:
        _cancel_all(backend, list(submitted))
        raise
    done = [spec for job_id, spec in submitted.items() if ended[job_id].state == "completed"]
    errors = {
        job_id: ended[job_id].error or ended[job_id].state
        for job_id in submitted
        if ended[job_id].state != "completed"
    }
    return aggregate(iteration, done, errors)


def _wait(backend: Backend, job_id: str, stop: threading.Event | None) -> JobRecord:
    """The job's record once it ended; KeyboardInterrupt as soon as ``stop`` is set."""
    if stop is None:
        return backend.wait(job_id)
    while True:
        if stop.is_set():
            raise KeyboardInterrupt("training stopped")
        with contextlib.suppress(TimeoutError):
            return backend.wait(job_id, timeout_s=STOP_POLL_S)


def _cancel_all(backend: Backend, job_ids: list[str]) -> None:
    """Cancel ``job_ids`` and wait for them to end (each at most the grace period + 30 s)."""
    for job_id in job_ids:
        with contextlib.suppress(Exception):
            backend.cancel(job_id)
    for job_id in job_ids:
        try:
            backend.wait(job_id, timeout_s=GRACE_S + 30)
        except Exception as exc:  # cleanup of an interrupted iteration: report, go on
            logger.warning("training job %s did not end after its cancel: %s", job_id, exc)


def stop_leftover_jobs(config: LoopConfig, iteration: IterationRecord) -> int:
    """Cancel the unfinished jobs an earlier (killed) attempt at ``iteration`` left; returns
    how many there were."""
    if not (iteration.runs_dir / JOBS_DIR).is_dir():
        return 0
    left = [r.job_id for r in JobStore(iteration.runs_dir).all() if not r.done]
    if left:
        logger.info("cancelling %d training job(s) of an earlier attempt", len(left))
        _cancel_all(iteration_backend(config, iteration), left)
    return len(left)
