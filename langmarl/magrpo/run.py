"""Run files for the weight-space trainers: one JSON/YAML file → a ready trainer.

Example (``configs/magrpo/writing_tiny.json``)::

    {"algorithm": "magrpo", "task": {"name": "writing"}, "models": ["smollm2", "smollm2"],
     "external": {"mode": "plain"}, "trainer": {"num_generations": 2, "max_steps": 2},
     "run_id": "magrpo-writing-tiny", "seed": 0}

The run lands in ``<runs_dir>/<run_id>`` (:mod:`langmarl.config.runs_root`): the trainer's
``output_dir`` and ``seed`` are set from the top-level keys, not in ``trainer``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from langmarl.config.runs_root import (
    DEFAULT_RUNS_DIR,
    RunId,
    RunsDir,
    take_section_placement,
)
from langmarl.core.errors import ConfigError
from langmarl.core.validation import ConfigSource, config_error
from langmarl.magrpo.config import ActorCriticConfig, MAGRPOConfig, TrainerConfig
from langmarl.magrpo.feedback import FeedbackMode, expert_llm_config

Algorithm = Literal["magrpo", "iac", "maac"]
TRAINER_CONFIGS: dict[str, type[TrainerConfig]] = {
    "magrpo": MAGRPOConfig,
    "iac": ActorCriticConfig,
    "maac": ActorCriticConfig,
}


class TaskSpec(BaseModel):
    """Which ready task to train on."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["coding", "writing", "poster", "reference_far", "reference_close"] = "writing"
    """The task (see ``langmarl.magrpo.tasks``)."""
    dataset_path: str | None = None
    """A JSONL file instead of the built-in toy examples (HumanEval format for coding)."""
    num_train: int | None = Field(default=None, ge=1)
    """Use only the first examples for training."""
    num_eval: int = Field(default=2, ge=1)
    """Held-out examples (taken from the start of the data)."""
    listener: Literal["rank", "generate"] | None = None
    """The reference tasks only: ``rank`` (their default), a frozen listener ranks the items
    and only the speaker trains, in one turn; ``generate``, a trained listener answers with
    a label in a second turn (see ``langmarl.magrpo.reference``)."""
    speaker: Literal["generate", "rank"] | None = None
    """The reference tasks only: ``generate`` (their default), the speaker writes its word;
    ``rank``, it chooses one of the target's words by their likelihood (a menu; with
    ``listener: rank`` only)."""

    @model_validator(mode="after")
    def _roles_are_for_reference(self) -> TaskSpec:
        for name in ("listener", "speaker"):
            if getattr(self, name) is not None and not self.name.startswith("reference_"):
                raise ValueError(
                    f"{name} is an option of the reference tasks, not of {self.name!r}: drop it"
                )
        if self.speaker == "rank" and self.listener == "generate":
            raise ValueError(
                "speaker 'rank' chooses its word in the one turn of listener 'rank': set "
                "listener to 'rank' or speaker to 'generate'"
            )
        return self

    def options(self) -> dict[str, Any]:
        """The task builder's keyword arguments (``listener`` and ``speaker`` only where
        they are set)."""
        fields = {"dataset_path": self.dataset_path, "num_train": self.num_train,
                  "num_eval": self.num_eval}  # fmt: skip
        roles = {"listener": self.listener, "speaker": self.speaker}
        return {**fields, **{k: v for k, v in roles.items() if v is not None}}


class ExternalSpec(BaseModel):
    """External feedback between turns (used when num_turns > 1)."""

    model_config = ConfigDict(extra="forbid")

    mode: FeedbackMode = "plain"
    """'plain', 'level_feedback' (coding only) or 'expert_edits'."""
    sandbox_slice: int | str | None = 1
    """level_feedback: tests to run (0/None/'all': every test, k: first k, -k: last k)."""
    expert_max_tokens: int = Field(default=128, ge=1)
    """expert_edits: answer budget of the expert."""
    expert_model: str | None = None
    """expert_edits: the expert LLM, a preset name ('gpt-4o-mini', see `langmarl models`) or
    an LLM config file (None: the embedded model)."""

    @field_validator("expert_model")
    @classmethod
    def _known_expert_model(cls, value: str | None) -> str | None:
        if value is not None:
            expert_llm_config(value)  # unknown preset or missing file: did-you-mean error
        return value

    @model_validator(mode="after")
    def _expert_model_needs_expert_edits(self) -> ExternalSpec:
        if self.expert_model is not None and self.mode != "expert_edits":
            raise ConfigError(
                f"expert_model={self.expert_model!r} is only used by mode 'expert_edits', but "
                f"mode is {self.mode!r}: set mode to 'expert_edits' or drop expert_model"
            )
        return self


class RunConfig(BaseModel):
    """A weight-space training run."""

    model_config = ConfigDict(extra="forbid")

    algorithm: Algorithm = "magrpo"
    """'magrpo', 'iac' or 'maac'."""
    task: TaskSpec = Field(default_factory=TaskSpec)
    """The task."""
    models: list[str] = Field(default_factory=lambda: ["smollm2", "smollm2"])
    """One model name/path per agent ('smollm2' is the embedded SmolLM2-135M-Instruct)."""
    external: ExternalSpec = Field(default_factory=ExternalSpec)
    """External feedback."""
    trainer: dict[str, Any] = Field(default_factory=dict)
    """Fields of MAGRPOConfig (magrpo) or ActorCriticConfig (iac, maac), except
    ``output_dir`` and ``seed``: the keys below set them."""
    heldout: bool = True
    """Score the agents greedily on every held-out example before and after training and
    write ``heldout.json`` (untrained → trained) into the run directory."""
    runs_dir: RunsDir = DEFAULT_RUNS_DIR
    """The directory holding runs, shared by every space; the run's directory (the
    trainer's ``output_dir``) is ``<runs_dir>/<run_id>``."""
    run_id: RunId = None
    """The run's directory name inside ``runs_dir`` (``None``: the algorithm, e.g.
    ``runs/magrpo``, as before run ids)."""
    seed: int = 0
    """Seed for sampling and data order (the trainer's ``seed``)."""

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        return take_section_placement(data, "trainer")

    @property
    def run_dir(self) -> Path:
        """Where the run lands: ``<runs_dir>/<run_id or algorithm>``."""
        return Path(self.runs_dir) / (self.run_id or self.algorithm)

    def trainer_config(self, source: str = "") -> TrainerConfig:
        """The validated trainer config (num_agents follows ``models``; ``output_dir`` is
        :attr:`run_dir`, ``seed`` the run's); errors name ``trainer.<field>`` in ``source``."""
        cls = TRAINER_CONFIGS[self.algorithm]
        data = {"num_agents": len(self.models), **self.trainer}
        data |= {"output_dir": str(self.run_dir), "seed": self.seed}
        try:
            return cls(**data)
        except ValidationError as exc:
            raise config_error(exc, cls, source, at="trainer") from None


RUN_CONFIG_FILE = "run_config.json"
"""The run file as validated, saved in the run directory (``langmarl magrpo eval`` reads it)."""


def save_run_config(config: RunConfig) -> Path:
    """Write ``config`` to ``<run_dir>/run_config.json`` (atomically)."""
    from langmarl.core.files import atomic_write_json

    path = config.run_dir / RUN_CONFIG_FILE
    atomic_write_json(path, config.model_dump(mode="json"))
    return path


def check_new_run(config: RunConfig) -> None:
    """Refuse to start a run from step 0 in a directory that already holds one.

    Raises:
        ConfigError: if the run directory has metrics or checkpoints.
    """
    output = config.run_dir
    if (output / "metrics.jsonl").exists() or (output / "checkpoints").exists():
        raise ConfigError(
            f"{str(output)!r} already holds a run: continue it with --resume latest, "
            "or start a new one elsewhere (--set run_id=<new name>)"
        )


def load_run_dir(run_dir: str | Path) -> RunConfig:
    """The run config saved in a run directory.

    Raises:
        ConfigError: if ``run_dir`` holds no ``run_config.json``.
    """
    path = Path(run_dir) / RUN_CONFIG_FILE
    if not path.is_file():
        raise ConfigError(
            f"{str(run_dir)!r} holds no {RUN_CONFIG_FILE}: give the directory of a run "
            "started with `langmarl magrpo train`"
        )
    config = load_run_config(path)
    moved = Path(run_dir).resolve()
    if config.run_dir.resolve() != moved:
        # The directory was moved or copied: evaluate it where it is now.
        config.runs_dir, config.run_id = str(moved.parent), moved.name
    return config


def load_run_config(path: str | Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Read a run file and apply dotted ``overrides`` (``trainer.max_steps=3``)."""
    from langmarl.config.loading import apply_overrides, read_mapping

    data = apply_overrides(read_mapping(Path(path)), overrides or {})
    try:
        config = RunConfig(**data)
    except ValidationError as exc:
        raise config_error(exc, RunConfig, ConfigSource(path, overrides or ())) from None
    config.trainer_config(ConfigSource(path, overrides or ()))  # fail early on bad fields
    return config


def build_magrpo_trainer(config: RunConfig) -> Any:
    """The trainer for a run config, with task data, formatters, reward and feedback."""
    from langmarl.magrpo.actor_critic import IACTrainer, MAACTrainer
    from langmarl.magrpo.feedback import make_external
    from langmarl.magrpo.tasks import get_task
    from langmarl.magrpo.trainer import MAGRPOTrainer

    task = get_task(config.task.name, **config.task.options())
    if len(config.models) != task.num_agents:
        raise ConfigError(
            f"task {task.name!r} has {task.num_agents} agents but models lists "
            f"{len(config.models)}: give {task.num_agents} model names"
        )
    args = config.trainer_config()
    _check_task_turns(task, args)
    external = task.transition
    if args.num_turns > 1 and external is None:
        options: dict[str, Any] = {}
        if config.external.mode == "level_feedback":
            options = {"tests": task.feedback_options.get("tests", {})}
            options["sandbox_slice"] = config.external.sandbox_slice
        elif config.external.mode == "expert_edits":
            options = {
                "max_tokens": config.external.expert_max_tokens,
                "model": config.external.expert_model,
            }
        external = make_external(config.external.mode, **options)
    trainer_cls = {"magrpo": MAGRPOTrainer, "iac": IACTrainer, "maac": MAACTrainer}
    trainer = trainer_cls[config.algorithm](
        config.models,
        task.reward_func,
        args,
        formatters=task.formatters,
        train_dataset=task.train_dataset,
        eval_dataset=task.eval_dataset,
        external_transition=external,
    )
    trainer.reward_range = task.reward_range
    return trainer


def _check_task_turns(task: Any, args: TrainerConfig) -> None:
    """Refuse trainer settings a task with its own transition cannot run under.

    Raises:
        ConfigError: naming the setting to change.
    """
    if task.num_turns is not None and args.num_turns != task.num_turns:
        raise ConfigError(
            f"task {task.name!r} takes {task.num_turns} turns but trainer.num_turns is "
            f"{args.num_turns}: set trainer.num_turns to {task.num_turns}"
        )
    if task.transition is not None and args.external_prompt_passthrough:
        raise ConfigError(
            f"task {task.name!r} builds its next-turn prompts with its formatters: set "
            "trainer.external_prompt_passthrough to false"
        )


def validate_run_config(data: dict[str, Any], source: str = "the config") -> None:
    """Check a MAGRPO/IAC/MAAC run file as ``langmarl magrpo train`` would.

    Raises:
        ConfigError: naming the invalid field and the fix.
    """
    from pydantic import ValidationError

    from langmarl.core.validation import config_error

    try:
        RunConfig.model_validate(data).trainer_config()
    except ValidationError as exc:
        raise config_error(exc, RunConfig, source) from None
