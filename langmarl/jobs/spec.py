"""What a job is: a training command of one kind, its config, overrides, seed and resources.

A job runs the same ``langmarl`` command a user would type (``langmarl train``,
``langmarl magrpo train``, …), so a job's run is an ordinary run under the run contract. Before
anything starts, :func:`resolve_config` applies the overrides and the seed, points the
config's output field at ``<runs_dir>/<job_id>`` and validates it with the config class the
command itself uses; a bad value fails at submission, naming the field and the fix.

Where each kind puts its run (the field the job sets):

=============== ========================= ===================================== =============
kind            command                   run directory                         seed field
=============== ========================= ===================================== =============
language        ``train CONFIG``          ``experiment_dir`` + ``--run-id``     ``seed``
parl_language   ``parl train CONFIG``     ``experiment_dir`` + ``--run-id``     ``seed``
magrpo          ``magrpo train CONFIG``   ``trainer.output_dir``                ``trainer.seed``
parl_grpo       ``parl grpo --config F``  ``grpo.output_dir``                   ``grpo.seed``
p2p             ``p2p run INTENT --config`` ``--runs-dir`` (the session inside) ``seeds``
=============== ========================= ===================================== =============
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from langmarl.config.loading import apply_overrides, read_mapping
from langmarl.core.errors import ConfigError

JobKind = Literal["language", "parl_language", "magrpo", "parl_grpo", "p2p"]


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

    kind: JobKind
    """The command: language (``train``), parl_language (``parl train``), magrpo (``magrpo
    train``), parl_grpo (``parl grpo``), p2p (``p2p run``)."""
    config: str | dict[str, Any] = Field(default_factory=dict)
    """A config file (JSON/YAML) or the config itself as a mapping."""
    overrides: dict[str, Any] = Field(default_factory=dict)
    """Dotted keys to values, as ``--set key=value`` (``{"trainer.max_steps": 2}``)."""
    seed: int | None = None
    """The run's seed (written to the kind's seed field; None: the config's)."""
    resources: Resources = Field(default_factory=Resources)
    """Cores and memory."""
    name: str | None = None
    """A label; the job id starts with it (default: the kind)."""
    intent: str | None = None
    """p2p only: the behaviour wanted, in words."""

    @model_validator(mode="after")
    def _intent_only_for_p2p(self) -> JobSpec:
        if self.kind == "p2p" and not self.intent:
            raise ConfigError("a p2p job needs intent: the behaviour wanted, in words")
        if self.kind != "p2p" and self.intent is not None:
            raise ConfigError(f"intent is only used by p2p jobs, not {self.kind!r}: drop it")
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


# -- the kinds ------------------------------------------------------------------------------
def _validate_base(data: dict[str, Any]) -> None:
    from langmarl.config.loading import config_from_dict

    config_from_dict(data, source="the job's config")


def _validate_parl_language(data: dict[str, Any]) -> None:
    _validate_base(data)
    if data.get("env") != "parallel_tasks":
        raise ConfigError(
            f"a parl_language job needs env='parallel_tasks', not {data.get('env')!r}: use "
            "kind 'language' for other environments"
        )


def _validate_magrpo(data: dict[str, Any]) -> None:
    from pydantic import ValidationError

    from langmarl.core.validation import config_error
    from langmarl.magrpo.run import RunConfig

    try:
        RunConfig.model_validate(data).trainer_config()
    except ValidationError as exc:
        raise config_error(exc, RunConfig, "the job's config") from None


GRPO_SECTIONS = ("env", "grpo")


def _validate_parl_grpo(data: dict[str, Any]) -> None:
    from langmarl.core.validation import did_you_mean
    from langmarl.parl.grpo_config import OrchestratorGRPOConfig

    for key in data:
        if key not in GRPO_SECTIONS:
            raise ConfigError(
                f"unknown section {key!r} in the parl_grpo job's config."
                f"{did_you_mean(str(key), GRPO_SECTIONS)} Sections: {', '.join(GRPO_SECTIONS)}"
            )
    OrchestratorGRPOConfig.from_mapping(data.get("grpo", {}))


def _validate_p2p(data: dict[str, Any]) -> None:
    from pydantic import ValidationError

    from langmarl.core.validation import config_error
    from langmarl.p2p.loop import LoopConfig

    try:
        LoopConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, LoopConfig, "the job's config") from None


def _in_experiment_dir(data: dict[str, Any], run_dir: Path) -> tuple[dict[str, Any], list[str]]:
    placed = {**data, "experiment_dir": str(run_dir.parent)}
    placed["checkpoint_dir"] = str(run_dir / "exported")  # everything inside the run dir
    return placed, ["--run-id", run_dir.name]


def _at(dotted: str) -> Callable[[dict[str, Any], Path], tuple[dict[str, Any], list[str]]]:
    def place(data: dict[str, Any], run_dir: Path) -> tuple[dict[str, Any], list[str]]:
        return apply_overrides(data, {dotted: str(run_dir)}), []

    return place


def _p2p_runs_dir(data: dict[str, Any], run_dir: Path) -> tuple[dict[str, Any], list[str]]:
    return data, ["--runs-dir", str(run_dir)]


@dataclass(frozen=True)
class KindEntry:
    """How a job of one kind is checked, placed and started."""

    argv: tuple[str, ...]
    """The ``langmarl`` sub-command."""
    config_flag: str | None
    """How the config file is passed (None: as the first argument)."""
    validate: Callable[[dict[str, Any]], None]
    """Raises ConfigError for an invalid config (the command's own config class)."""
    place: Callable[[dict[str, Any], Path], tuple[dict[str, Any], list[str]]]
    """``(config, run_dir) -> (config writing into run_dir, extra arguments)``."""
    seed_key: str
    """The dotted config key of the seed."""
    seed_as_list: bool = False


KINDS: dict[str, KindEntry] = {
    "language": KindEntry(("train",), None, _validate_base, _in_experiment_dir, "seed"),
    "parl_language": KindEntry(
        ("parl", "train"), None, _validate_parl_language, _in_experiment_dir, "seed"
    ),
    "magrpo": KindEntry(
        ("magrpo", "train"), None, _validate_magrpo, _at("trainer.output_dir"), "trainer.seed"
    ),
    "parl_grpo": KindEntry(
        ("parl", "grpo"), "--config", _validate_parl_grpo, _at("grpo.output_dir"), "grpo.seed"
    ),
    "p2p": KindEntry(
        ("p2p", "run"), "--config", _validate_p2p, _p2p_runs_dir, "seeds", seed_as_list=True
    ),
}


def resolve_config(spec: JobSpec, run_dir: Path) -> tuple[dict[str, Any], list[str]]:
    """The config the job's command reads (overrides, seed and run directory applied,
    validated) and the extra arguments that place the run in ``run_dir``.

    Raises:
        ConfigError: naming the invalid field and the fix, before anything runs.
    """
    entry = KINDS[spec.kind]
    data = read_mapping(Path(spec.config)) if isinstance(spec.config, str) else spec.config
    overrides = dict(spec.overrides)
    if spec.seed is not None:
        overrides[entry.seed_key] = [spec.seed] if entry.seed_as_list else spec.seed
    placed, extra = entry.place(apply_overrides(data, overrides), run_dir)
    entry.validate(placed)
    return placed, extra


def validate_spec(spec: JobSpec) -> None:
    """Check ``spec``'s config as its command would, without running anything.

    Raises:
        ConfigError: naming the invalid field and the fix.
    """
    resolve_config(spec, Path("runs") / "validate")


def command(spec: JobSpec, config_file: Path, extra: list[str], python: str) -> list[str]:
    """The job's ``langmarl`` command line (``python -m langmarl.cli ...``)."""
    entry = KINDS[spec.kind]
    argv = [python, "-m", "langmarl.cli", *entry.argv]
    if spec.intent is not None:
        argv.append(spec.intent)
    argv += [entry.config_flag, str(config_file)] if entry.config_flag else [str(config_file)]
    return argv + extra
