"""What a job is: a training command of one kind, its config, overrides, seed and resources.

A job runs the same ``langmarl`` command a user would type (``langmarl train``,
``langmarl magrpo train``, …), so a job's run is an ordinary run under the run contract. Before
anything starts, :func:`resolve_config` applies the overrides, places the run (:func:`place`)
and validates the config with the class the command itself uses; a bad value fails at
submission, naming the field and the fix.

Every kind is placed alike, with the keys every config has (:mod:`langmarl.config.runs_root`):
``runs_dir`` = the jobs' runs directory, ``run_id`` = the job id, and ``seed`` = the job's
seed if it has one. The run lands in ``<runs_dir>/<job_id>``. A job's kind is a kind of run
(:mod:`langmarl.store.kinds`): its spec names the command, how the config is passed and how
it is checked; a kind without a command cannot be started as a job.
"""

from __future__ import annotations

import re
import secrets
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from langmarl.config.loading import apply_overrides, read_mapping
from langmarl.config.runs_root import DEFAULT_RUNS_DIR, read_old_names
from langmarl.core.errors import ConfigError
from langmarl.jobs.environment import inline_keys
from langmarl.store import kinds
from langmarl.store.run import RUN_FILE


class Resources(BaseModel):
    """What a job may use."""

    model_config = ConfigDict(extra="forbid")

    cpus: int = Field(default=1, ge=1)
    """CPU cores: the local backend pins the job to this many cores (and sets
    ``OMP_NUM_THREADS`` and torch's threads to it); Ray reserves ``num_cpus``."""
    memory_gb: float | None = Field(default=None, gt=0)
    """A hint: Ray reserves this much memory for the job; the local backend records it only."""


class JobSpec(BaseModel):
    """One job: which command, on which config, with what."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    """The kind of run, which names the command (:mod:`langmarl.store.kinds`): language
    (``train``), parl_language (``parl train``), magrpo, iac, maac (``magrpo train``; the
    run's kind is the config's algorithm), parl_grpo (``parl grpo``), p2p (``p2p run``),
    p2p_bench (``p2p bench``), p2p_train (``p2p train-run``, one PPO run of a session)."""
    config: str | dict[str, Any] = Field(default_factory=dict)
    """A config file (JSON/YAML) or the config itself as a mapping."""
    overrides: dict[str, Any] = Field(default_factory=dict)
    """Dotted keys to values, as ``--set key=value`` (``{"trainer.max_steps": 2}``)."""
    seed: int | None = None
    """The run's seed (written to the config's ``seed``; None: the config's)."""
    resources: Resources = Field(default_factory=Resources)
    """Cores and memory."""
    name: str | None = None
    """A label; the job id starts with it (default: the kind)."""
    intent: str | None = None
    """The behaviour wanted, in words, for a kind whose command takes one before its config
    (the kind's ``needs_intent`` in :mod:`langmarl.store.kinds`: the reward space's ``p2p``).
    A fact of the kind, like its command, so the generic job carries it as a field: it is
    checked against the kind and passed on as the command's argument."""
    env: list[str] = Field(default_factory=list)
    """Environment variables (names) the command receives beyond the base set: the API keys
    its config reads (:mod:`langmarl.jobs.environment`; over the dashboard's API only those
    the operator allows)."""

    @field_validator("env")
    @classmethod
    def _variable_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"{name!r} is not an environment variable's name")
        return sorted(set(names))

    @field_validator("kind")
    @classmethod
    def _a_kind_with_a_command(cls, kind: str) -> str:
        spec = kinds.get(kind)
        if not spec.command:
            startable = ", ".join(k.name for k in kinds.all_kinds() if k.command)
            raise ConfigError(
                f"a {spec.name} run cannot be started as a job (its kind names no command): "
                f"choose kind from {startable}"
            )
        return spec.name

    @model_validator(mode="after")
    def _intent_where_the_command_takes_one(self) -> JobSpec:
        needs = kinds.get(self.kind).needs_intent
        if needs and not self.intent:
            raise ConfigError(f"a {self.kind} job needs intent: the behaviour wanted, in words")
        if not needs and self.intent is not None:
            takers = ", ".join(k.name for k in kinds.all_kinds() if k.needs_intent)
            raise ConfigError(f"intent is only used by {takers} jobs, not {self.kind!r}: drop it")
        return self


def parse_spec(data: dict[str, Any], source: str = "the job spec") -> JobSpec:
    """``data`` as a :class:`JobSpec`.

    Raises:
        ConfigError: naming every invalid field (unknown ones with "did you mean").
    """
    from pydantic import ValidationError

    from langmarl.core.validation import config_error

    try:
        return JobSpec.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, JobSpec, source) from None


def new_job_id(spec: JobSpec) -> str:
    """``<name or kind>-<YYYYmmdd-HHMMSS>-<4 hex>``: sortable by time, unique."""
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec.name or spec.kind).strip("-.") or spec.kind
    return f"{label[:40]}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def place(data: dict[str, Any], run_dir: Path, seed: int | None = None) -> dict[str, Any]:
    """``data`` writing its run into ``run_dir`` (``runs_dir`` its parent, ``run_id`` its
    name), with ``seed`` if given: the same keys for every kind. Old names of these keys in
    ``data`` are read as the new ones first (one deprecation line each), so the job's
    placement wins over them.

    Raises:
        ConfigError: for an old ``output_dir`` that names no run directory.
    """
    placed = {**read_old_names(data), "runs_dir": str(run_dir.parent), "run_id": run_dir.name}
    return placed if seed is None else {**placed, "seed": seed}


def resolve_config(spec: JobSpec, run_dir: Path) -> dict[str, Any]:
    """The config the job's command reads: overrides applied, the run placed in ``run_dir``
    with the job's seed (:func:`place`), validated.

    Raises:
        ConfigError: naming the invalid field and the fix, before anything runs.
    """
    data = read_mapping(Path(spec.config)) if isinstance(spec.config, str) else spec.config
    placed = place(apply_overrides(data, spec.overrides), run_dir, spec.seed)
    for field in inline_keys(placed):  # the config is copied into the job's records
        raise ConfigError(
            f"{field} holds an API key inline: a job's config is written to its records, so "
            "give the key through the environment instead (api_key_env_var naming a variable "
            "that holds it; see `langmarl jobs` in the docs for what a job receives)"
        )
    validate = kinds.get(spec.kind).validate_config
    if validate is not None:
        kinds.load(validate)(placed, "the job's config")
    return placed


def validate_spec(spec: JobSpec) -> None:
    """Check ``spec``'s config as its command would, without running anything.

    Raises:
        ConfigError: naming the invalid field and the fix.
    """
    resolve_config(spec, Path(DEFAULT_RUNS_DIR) / "validate")


def command(
    spec: JobSpec, config_file: Path, python: str, run_dir: Path | None = None
) -> list[str]:
    """The job's ``langmarl`` command line (``python -m langmarl.cli ...``); the kind's
    resume command when ``run_dir`` already holds its run (a retried attempt)."""
    kind = kinds.get(spec.kind)
    if run_dir is not None and kind.resume_command and (run_dir / RUN_FILE).is_file():
        fields = {"config": str(config_file), "run_dir": str(run_dir)}
        return [python, "-m", "langmarl.cli", *(a.format(**fields) for a in kind.resume_command)]
    argv = [python, "-m", "langmarl.cli", *kind.command]
    if spec.intent is not None:
        argv.append(spec.intent)
    argv += [kind.config_flag, str(config_file)] if kind.config_flag else [str(config_file)]
    return argv
