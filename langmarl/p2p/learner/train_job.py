"""One PPO run of a session's iteration as a job (kind ``p2p_train``).

A session with ``backend="local"`` or ``"ray"`` (:mod:`langmarl.p2p.learner.fanout`) submits each
config x seed as a job whose command is ``langmarl p2p train-run --config FILE``. The job's
config carries the validated reward *as text*: the command writes it into its own run
directory and trains it in one confined executor process (:func:`~langmarl.p2p.learner.executor.
train_runs`), exactly as a session's own processes do, so a job on another node needs no
file of the session. The run directory then holds the executor's files (``summary.json``,
metrics, videos) beside the job's ``run.json``; the session reads ``summary.json`` back as
data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langmarl.config.runs_root import DEFAULT_RUNS_DIR, RunId, RunsDir
from langmarl.core.errors import LangmarlError
from langmarl.p2p.learner.train_config import TrainConfig

KIND = "p2p_train"


class TrainingFailed(LangmarlError):
    """The executor process of a training job did not produce a run."""


class TrainJobConfig(BaseModel):
    """What one training job runs."""

    model_config = ConfigDict(extra="forbid")

    reward_source: str = Field(min_length=1)
    """The validated reward file's text (written into the run directory). It must pass the
    static check here (a job submitted over the API is refused at once), and the job
    validates it in the sandbox on its env before training, as a session does."""
    train: dict[str, Any] = Field(default_factory=dict)
    """TrainConfig fields of the run."""
    timeout_s: float = Field(default=3600.0, gt=0)
    """Wall-clock limit of the training process."""
    runs_dir: RunsDir = DEFAULT_RUNS_DIR
    """Parent of the run directory."""
    run_id: RunId = None
    """The run directory's name (a job sets its id)."""
    seed: int | None = None
    """The run's seed (None: the one in ``train``)."""

    @field_validator("reward_source")
    @classmethod
    def _statically_sound(cls, value: str) -> str:
        from langmarl.p2p.reward.validation import check_static

        result = check_static(value)
        if not result.ok:
            raise ValueError(f"the reward fails the static check ({result.stage}): "
                             f"{result.message()}")  # fmt: skip
        return value

    def train_config(self) -> TrainConfig:
        """The run's TrainConfig (``seed`` applied)."""
        seed = {} if self.seed is None else {"seed": self.seed}
        return TrainConfig.from_dict({**self.train, **seed}, "train")

    @property
    def run_dir(self) -> Path:
        return Path(self.runs_dir) / (self.run_id or f"train_seed_{self.train_config().seed}")


def validate_train_job(data: dict[str, Any], source: str = "the config") -> None:
    """Check a training job's config as ``langmarl p2p train-run`` would.

    Raises:
        ConfigError: naming the invalid field and the fix.
    """
    from pydantic import ValidationError

    from langmarl.core.validation import config_error

    try:
        config = TrainJobConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, TrainJobConfig, source) from None
    config.train_config()


def run_train_job(config: TrainJobConfig) -> Path:
    """Train the job's run (its ``run.json`` says how it ended) and return its directory.
    SIGTERM (a cancel, with the ``langmarl`` command's handlers) stops the executor process
    and ends the run ``cancelled``.

    Raises:
        TrainingFailed: with the executor's error, if no run finished.
    """
    from langmarl.p2p.learner.executor import train_runs
    from langmarl.p2p.reward.validation import validate_reward_code
    from langmarl.p2p.session.iteration_record import IterationRecord
    from langmarl.store.run import RunDir

    train = config.train_config()
    run = RunDir(config.run_dir)
    with run.lock():
        run.start(
            KIND, {**config.model_dump(exclude={"reward_source"}), "train": train.model_dump()}
        )
        with run.tracking():
            validation = validate_reward_code(config.reward_source, train.env_id)
            if not validation.ok:
                raise TrainingFailed(f"the reward did not validate ({validation.stage}): "
                                     f"{validation.message()}")  # fmt: skip
            record = IterationRecord(run.path)
            record.save_reward_source(config.reward_source)
            aggregation = train_runs(
                record, record.reward_fn_path, [train], [train.seed], max_parallel=1,
                timeout_s=config.timeout_s,
            )  # fmt: skip
            if not aggregation.runs:
                raise TrainingFailed("; ".join(aggregation.errors.values()) or "no run finished")
    return run.path
