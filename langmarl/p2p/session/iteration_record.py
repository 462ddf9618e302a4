"""One iteration's directory (or one executor run's) as a typed record: its files, its status,
and which run of it was judged.

The layout of a session and its iterations is described in :mod:`.records`; this module holds
the iteration's side of it, so the learner can write a run without the session's record.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from langmarl.core.errors import RunFileError
from langmarl.core.files import read_jsonl
from langmarl.core.secrets import Redactor, environment_secrets
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.session.contracts import (
    IterationAggregation,
    IterationOutcome,
    IterationStatus,
    JudgmentResult,
    RewardSpec,
    TrainSummary,
)

INPUT_FILES = ("prompt.txt", "reward_fn.py", "reward_spec.json", "config.json")
"""An iteration's inputs; every other file in its directory is an output of training it."""

M = TypeVar("M", bound=BaseModel)


def read_json_or_none(path: Path) -> Any:
    """The JSON at ``path``, or None when it is absent or unreadable (as a torn write is)."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:  # corrupt JSON or not UTF-8: treated as absent, as a torn write would be
        return None


def _read_model(path: Path, model: type[M]) -> M | None:
    data = read_json_or_none(path)
    return None if data is None else model.model_validate(data)


def _status_payload(status: str, error: str | None) -> dict[str, Any]:
    return {"status": status, "error": error, "updated_at": time.time()}


def step_of(stem: str) -> int:
    """The number after the last ``_`` of a file or directory name (``iter_3`` -> 3), else -1."""
    tail = stem.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else -1


@dataclass
class IterationInputs:
    """What one iteration trains on."""

    source: str
    """The reward code."""
    spec: RewardSpec
    """What the reward claims to compute, and who wrote it."""
    config: TrainConfig


class RecordDir:
    """A directory of the on-disk contract whose files pass ``redact`` when written."""

    def __init__(self, path: str | Path, redact: Redactor | None = None) -> None:
        self.path = Path(path)
        self.redact = redact if redact is not None else Redactor(environment_secrets())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"


class IterationRecord(RecordDir):
    """One iteration directory (``runs/<session>/iter_N/``) or one executor run directory.

    Args:
        path: The directory.
        redact: Scrubs secrets from every file written (default: the environment's secrets).
    """

    def __init__(self, path: str | Path, redact: Redactor | None = None) -> None:
        super().__init__(path, redact)
        self.iteration_id = self.path.name
        self.config_path = self.path / "config.json"
        self.reward_fn_path = self.path / "reward_fn.py"
        self.reward_spec_path = self.path / "reward_spec.json"
        self.summary_path = self.path / "summary.json"
        self.scalars_path = self.path / "metrics" / "scalars.jsonl"
        self.prompt_path = self.path / "prompt.txt"
        self.videos_dir = self.path / "videos"
        self.status_path = self.path / "status.json"
        self.judgment_path = self.path / "judgment.json"
        self.revised_reward_path = self.path / "reward_fn_revised.py"
        self.aggregation_path = self.path / "aggregation.json"
        self.outcome_path = self.path / "outcome.json"
        self.runs_dir = self.path / "runs"

    @property
    def trajectory_path(self) -> Path | None:
        """The latest ``trajectory_<step>.npz`` (a legacy ``.jsonl`` if no npz; None if none)."""
        for pattern in ("trajectory_*.npz", "trajectory_*.jsonl"):
            found = sorted(self.path.glob(pattern), key=lambda p: step_of(p.stem))
            if found:
                return found[-1]
        return None

    def read_config(self) -> dict[str, Any] | None:
        return read_json_or_none(self.config_path)

    def save_config(self, config: TrainConfig) -> None:
        self.redact.write_json(self.config_path, config.model_dump())

    def read_reward_source(self) -> str:
        return (
            self.reward_fn_path.read_text(encoding="utf-8") if self.reward_fn_path.is_file() else ""
        )

    def save_reward_source(self, source: str) -> None:
        self.redact.write_text(self.reward_fn_path, source)

    def read_reward_spec(self) -> RewardSpec:
        return _read_model(self.reward_spec_path, RewardSpec) or RewardSpec()

    def save_reward_spec(self, spec: RewardSpec) -> None:
        self.redact.write_json(self.reward_spec_path, spec.model_dump())

    def read_summary(self) -> TrainSummary | None:
        return _read_model(self.summary_path, TrainSummary)

    def save_summary(self, summary: TrainSummary) -> None:
        self.redact.write_json(self.summary_path, summary.model_dump())

    def read_judgment(self) -> JudgmentResult | None:
        return _read_model(self.judgment_path, JudgmentResult)

    def save_judgment(self, judgment: JudgmentResult) -> None:
        self.redact.write_json(self.judgment_path, judgment.model_dump())

    def read_outcome(self) -> IterationOutcome | None:
        return _read_model(self.outcome_path, IterationOutcome)

    def save_outcome(self, outcome: IterationOutcome) -> None:
        self.redact.write_json(self.outcome_path, outcome.model_dump())

    def save_inputs(self, prompt: str, inputs: IterationInputs) -> None:
        """Write the iteration's :data:`INPUT_FILES`."""
        self.save_prompt(prompt)
        self.save_reward_source(inputs.source)
        self.save_reward_spec(inputs.spec)
        self.save_config(inputs.config)

    def read_inputs(self) -> IterationInputs:
        """The inputs :meth:`save_inputs` wrote.

        Raises:
            RunFileError: if one is missing or unreadable.
        """
        spec = _read_model(self.reward_spec_path, RewardSpec)
        config = self.read_config()
        if not self.reward_fn_path.is_file() or spec is None or config is None:
            raise RunFileError(
                self.path,
                "the reward_fn.py, reward_spec.json or config.json of this iteration is "
                "missing or unreadable",
                "Restore them, or start a new session: this one cannot resume without them.",
            )
        source = self.read_reward_source()
        return IterationInputs(source, spec, TrainConfig.from_dict(config, str(self.config_path)))

    def clear_outputs(self) -> None:
        """Remove everything but the inputs (an interrupted iteration is trained again)."""
        for path in self.path.iterdir() if self.path.is_dir() else []:
            if path.name in INPUT_FILES:
                continue
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()

    def save_revised_reward(self, code: str) -> None:
        self.redact.write_text(self.revised_reward_path, code)

    def save_prompt(self, prompt: str) -> None:
        self.redact.write_text(self.prompt_path, prompt)

    def set_status(self, status: IterationStatus, error: str | None = None) -> None:
        self.redact.write_json(self.status_path, _status_payload(status, error))

    def read_status(self) -> dict[str, Any] | None:
        return read_json_or_none(self.status_path)

    def derive_status(self) -> str:
        """pending / running / completed / error / cancelled, or unknown for a foreign dir."""
        status = self.read_status()
        if status is not None:
            return str(status.get("status", "unknown"))
        if self.summary_path.is_file():
            return "completed"
        if self.scalars_path.is_file():
            return "running"
        return "pending" if self.config_path.is_file() else "unknown"

    def compute_progress(self) -> float | None:
        """Fraction of ``total_timesteps`` done, from the last scalars row (None if unknown)."""
        config = self.read_config()
        rows = read_jsonl(self.scalars_path)
        if not config or not rows:
            return None
        total = max(int(config.get("total_timesteps", 0)), 1)
        return min(1.0, max(int(r.get("step", 0)) for r in rows) / total)

    def video(self, name: str) -> Path | None:
        """The video ``name`` of this run's ``videos/``, or None when there is none: no file,
        or a name that leaves the directory (absolute, ``..``, a symlink out). The names come
        from ``summary.json``, which the confined training process wrote, and the unconfined
        session decodes what they name."""
        if not name or Path(name).is_absolute() or Path(name).name != name:
            return None
        path = self.videos_dir / name
        try:
            inside = path.resolve(strict=True).parent == self.videos_dir.resolve(strict=True)
        except OSError:
            return None
        return path if inside and path.is_file() and not path.is_symlink() else None

    def video_filenames(self) -> list[str]:
        return (
            sorted(p.name for p in self.videos_dir.glob("*.mp4"))
            if self.videos_dir.is_dir()
            else []
        )

    def parse_scalars(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``(training rows, evaluation rows)`` of ``metrics/scalars.jsonl``."""
        rows = read_jsonl(self.scalars_path)
        return [r for r in rows if r.get("type") == "train"], [
            r for r in rows if r.get("type") == "eval"
        ]

    def run_records(self) -> list[IterationRecord]:
        """The per-run records of a multi-run iteration (empty for a single run)."""
        if not self.runs_dir.is_dir():
            return []
        return [
            IterationRecord(p, self.redact)
            for p in sorted(self.runs_dir.iterdir())
            if p.is_dir() and not p.name.startswith(".")  # .jobs: the training jobs' records
        ]

    def read_aggregation(self) -> IterationAggregation | None:
        """``aggregation.json``: the runs of a multi-run iteration and which one was judged
        (None for a single run, or when the file is unreadable)."""
        try:
            return _read_model(self.aggregation_path, IterationAggregation)
        except ValueError:
            return None

    def judged_run(self, aggregation: IterationAggregation | None = None) -> IterationRecord:
        """The run that was judged: the directory of ``aggregation.best_run`` in a multi-run
        iteration (the median seed of the best config), else this iteration itself.

        Its videos, trajectories, scalars and policy are what the judges saw, so the loop,
        the look-back, ``p2p play`` and the analysis all read that run through here.

        Args:
            aggregation: The iteration's aggregation when the caller holds it (the loop, right
                after training); by default ``aggregation.json`` is read.
        """
        aggregation = aggregation if aggregation is not None else self.read_aggregation()
        best = aggregation.best_run if aggregation else None
        run = self.runs_dir / (best or "")
        return IterationRecord(run, self.redact) if best and run.is_dir() else self

    def validate(self) -> list[str]:
        """Missing or invalid items of a completed iteration ([] when it is complete)."""
        problems = []
        for name in ("config_path", "reward_fn_path", "reward_spec_path", "summary_path"):
            path: Path = getattr(self, name)
            if not path.is_file():
                problems.append(f"missing {path.name}")
        for path, model in ((self.summary_path, TrainSummary), (self.reward_spec_path, RewardSpec)):
            if path.is_file():
                try:
                    _read_model(path, model)
                except ValueError as exc:
                    problems.append(f"invalid {path.name}: {str(exc)[:120]}")
        if not self.run_records():
            if not self.scalars_path.is_file():
                problems.append("missing metrics/scalars.jsonl")
            elif not self.parse_scalars()[1]:
                problems.append("metrics/scalars.jsonl has no evaluation rows")
        return problems
