"""`BaseConfig`: the fields every language-space training run shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from langmarl.config.overrides import apply_overrides
from langmarl.config.pool import PoolSettings, Search
from langmarl.config.runs_root import (
    DEFAULT_RUNS_DIR,
    RUNS_DIR_MEANING,
    RunId,
    RunsDir,
    take_renamed,
)
from langmarl.core.deprecation import deprecated
from langmarl.core.errors import ConfigError
from langmarl.core.mappings import read_mapping
from langmarl.core.validation import ConfigSource, validate_model
from langmarl.llm.config import LLMConfig, coerce_llm
from langmarl.tracking.factory import ReportTo

Paradigm = Literal["central_global", "central_credit"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
Grounding = Literal["auto", "on", "off"]


class BaseConfig(BaseModel):
    """Shared configuration of a training run.

    LLM fields accept an ``LLMConfig``, a preset name (``"gpt-4o-mini"``, ``"local"``), a path
    to an LLM config file, or a dict (optionally with a ``preset`` key to start from).
    When no LLM is configured at all, every role uses the embedded local model.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    env_name: ClassVar[str] = "base"

    env: str = "language"
    """Registered environment this config is for; selects the config class on load."""
    exp_name: str = "experiment"
    """Experiment name (part of the run id)."""
    paradigm: Paradigm = "central_credit"
    """``central_credit``: the critic assigns credit per agent; ``central_global``: one shared
    evaluation and gradient for the whole team."""
    num_iterations: int = Field(default=5, ge=0, le=100_000)
    """Number of training iterations."""
    trajectories_per_iteration: int = Field(default=10, ge=1, le=100_000)
    """Episodes collected per iteration."""
    max_failure_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    """Largest share of an iteration's episodes (or of its critic evaluations) that may fail
    for good (LLM errors after retries) before the run stops with status ``failed`` and a
    non-zero exit; the failing iteration is not checkpointed, so training again resumes it.
    An iteration in which every episode failed always stops the run."""
    mini_batch_size: int | None = Field(default=None, ge=1, le=100_000)
    """If set, subsample this many trajectories for gradient computation (``None``: all)."""
    start_iteration: int = Field(default=0, ge=0)
    """Iteration to start from."""
    llm: LLMConfig | None = None
    """Default LLM for every role; ``None`` with no role set means the embedded model."""
    actor_llm: LLMConfig | None = None
    """LLM for the actors; falls back to ``llm``."""
    critic_llm: LLMConfig | None = None
    """LLM for the critic; falls back to ``llm``."""
    optimizer_llm: LLMConfig | None = None
    """LLM for the optimizer; falls back to ``llm``."""
    num_agents: int = Field(default=2, ge=1)
    """Number of agents."""
    runs_dir: RunsDir = DEFAULT_RUNS_DIR
    """The directory holding runs, shared by every space (``langmarl runs``, ``plot`` and
    ``dashboard`` read it by default); this run's directory is ``<runs_dir>/<run_id>``.
    Replaces ``experiment_dir``, still read for now with a deprecation line."""
    run_id: RunId = None
    """The run's directory name inside ``runs_dir`` (``None``: ``exp_name``; ``langmarl train
    --run-id`` sets it, ``--fresh`` appends a timestamp). Training again with the same id
    resumes the run."""
    checkpoint_dir: str | None = None
    """Where the newest policies are exported after every iteration, as
    ``<checkpoint_dir>/<run_id>/<agent>.txt`` (``None``: ``exported/`` inside the run, so a
    run writes nothing outside its directory)."""
    episode_generation_workers: int = Field(default=8, ge=1, le=1024)
    """Concurrent episodes: trajectory generation, candidate validation and held-out
    evaluation."""
    max_workers: int = Field(default=5, ge=1, le=1024)
    """Concurrent critic evaluations in the evaluate phase (each episode's gradients start
    when its evaluation is back, bounded by ``optimizer_workers``)."""
    optimizer_workers: int = Field(default=1, ge=1, le=1024)
    """Concurrent optimizer calls: gradients, gradient aggregations and candidate policy
    updates."""
    log_level: LogLevel = "INFO"
    """Logging level."""
    seed: int | None = None
    """Seed for task sampling and mini-batch selection (``None``: not reproducible)."""
    report_to: ReportTo = Field(default_factory=list)
    """Experiment trackers fed from the run's ``metrics.jsonl`` while it trains:
    ``"tensorboard"``, ``"mlflow"``, ``"wandb"``, ``"trackio"``, a list of them, ``"all"``
    (every installed one) or ``"none"`` (the default); each needs its extra, e.g.
    ``pip install 'langmarl[tensorboard]'``. Local trackers write inside the run directory."""
    validate_updates: bool = True
    """Score every candidate policy on a fixed validation batch before it replaces the
    current one, and keep it only if its score is not lower (``False``: accept every update,
    as the reference does)."""
    validation_size: int = Field(default=4, ge=1)
    """Tasks in the validation batch (drawn once per run from the training tasks with the
    run's seed). Each candidate costs this many episodes."""
    update_candidates: int = Field(default=1, ge=1, le=8)
    """Candidate policies the optimizer proposes per agent and iteration; the best-scoring
    one competes with the current policy (needs ``validate_updates``)."""
    rescore_incumbent: bool = False
    """Score the current policies again every iteration instead of reusing their score;
    needed when the reward changes during training (e.g. an annealed PARL term)."""
    search: Search = "gradient"
    """How policies improve: ``gradient`` (the critic's language gradients rewrite one
    incumbent team) or ``pool`` (a Pareto pool of candidates mutated by demonstrations from
    the run's own episodes, merges and optionally rewrites; see ``pool``)."""
    pool: PoolSettings = Field(default_factory=PoolSettings)
    """Settings of the ``pool`` search (ignored by ``gradient``)."""
    grounded_feedback: Grounding = "auto"
    """Show the critic the verifier's facts (expected vs got, format violations, failing
    tests). ``auto``: where the task has a verifier; ``on``: the same, and a task without a
    verifier is an error; ``off``: the critic sees the episode only. ``true``/``false`` mean
    ``on``/``off``."""

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        return take_renamed(data, "experiment_dir", "runs_dir", RUNS_DIR_MEANING)

    @property
    def experiment_dir(self) -> str:
        """``runs_dir`` under the reference API's name (read-only, one deprecation line);
        langmarl itself reads ``runs_dir``."""
        deprecated("experiment_dir", RUNS_DIR_MEANING)
        return self.runs_dir

    def chosen_run_id(self) -> str:
        """The run's directory name inside ``runs_dir``: ``run_id``, else ``exp_name``.
        Every entry point (``langmarl train``, ``build_trainer``, the trainer) asks this."""
        return self.run_id or self.exp_name

    def with_fresh_run_id(self, stamp: str) -> BaseConfig:
        """A copy naming a new run: :meth:`chosen_run_id` + ``-<stamp>`` (``--fresh``)."""
        return self.model_copy(update={"run_id": f"{self.chosen_run_id()}-{stamp}"})

    @field_validator("llm", "actor_llm", "critic_llm", "optimizer_llm", mode="before")
    @classmethod
    def _coerce_llm(cls, value: Any) -> Any:
        return coerce_llm(value)

    @field_validator("grounded_feedback", mode="before")
    @classmethod
    def _grounding_bool(cls, value: Any) -> Any:
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value

    @model_validator(mode="after")
    def _check_candidates(self) -> BaseConfig:
        if self.update_candidates > 1 and not self.validate_updates:
            raise ConfigError(
                f"update_candidates={self.update_candidates} needs validate_updates=true: "
                "candidates are chosen by their validation score; set update_candidates=1 "
                "or validate_updates=true"
            )
        return self

    @model_validator(mode="after")
    def _check_search(self) -> BaseConfig:
        if self.search == "pool" and not self.validate_updates:
            raise ConfigError(
                "search='pool' needs validate_updates=true: the pool keeps a candidate only "
                "after scoring it on the validation batch; set validate_updates=true or "
                "search='gradient'"
            )
        return self

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    def _fallback(self, role_llm: LLMConfig | None) -> LLMConfig:
        return role_llm or self.llm or LLMConfig.from_preset("local")

    def get_actor_llm(self) -> LLMConfig:
        """The actors' LLM: ``actor_llm``, else ``llm``, else the embedded model."""
        return self._fallback(self.actor_llm)

    def get_critic_llm(self) -> LLMConfig:
        """The critic's LLM: ``critic_llm``, else ``llm``, else the embedded model."""
        return self._fallback(self.critic_llm)

    def get_optimizer_llm(self) -> LLMConfig:
        """The optimizer's LLM: ``optimizer_llm``, else ``llm``, else the embedded model."""
        return self._fallback(self.optimizer_llm)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "") -> BaseConfig:
        """Validate ``data`` into this class; errors name field, value and fix."""
        return validate_model(cls, data, source)

    @classmethod
    def from_json(cls, path: str | Path, overrides: dict[str, Any] | None = None) -> BaseConfig:
        """Load a config from a JSON (or YAML) file, applying dotted-key ``overrides``."""
        data = apply_overrides(read_mapping(Path(path)), overrides or {})
        return cls.from_dict(data, source=ConfigSource(path, overrides or ()))

    def to_json(self, path: str | Path) -> None:
        """Write the config as JSON, atomically. API keys are never written."""
        from langmarl.core.files import atomic_write_text

        atomic_write_text(Path(path), self.model_dump_json(indent=2) + "\n")
