"""Typed accessors for the on-disk contract of iterations and sessions.

Layout::

    runs/<session_id>/                run.json  metrics.jsonl  logs/events.jsonl  (the run
                                      contract, kind p2p: langmarl.store.run)
                                      loop_history.json  metadata.json  analysis.json
        iter_1/                       inputs: prompt.txt  reward_fn.py  reward_spec.json
                                      config.json; outputs: summary.json  status.json
                                      judgment.json  outcome.json  reward_fn_revised.py
            metrics/scalars.jsonl     one JSON line per training rollout / evaluation checkpoint
            videos/*.mp4              p10 / median / p90 evaluation episodes per checkpoint
            trajectory_<step>.npz     saved evaluation trajectories
            runs/<run_id>/            one executor run per config x seed (multi-run iterations)

Every file is plain JSON/JSONL/text/npz and written atomically. JSON and text files pass the
record's :class:`~langmarl.core.secrets.Redactor` first (the session's: environment secrets
and the LLM keys; by default the environment's), so an API key a model echoed into a reply
never reaches disk.

A session's ``run.json`` maps its status to the run statuses (``passed``/``max_iterations``
→ completed, ``invalid_code``/``error`` → failed, ``cancelled`` → stopped, ``pending``/
``running`` → running) and keeps the session's own as ``outcome``; ``metrics.jsonl`` has a
line per judged iteration (``step`` = iteration number, ``intent_score``, ``mean_return``).

Resuming (:mod:`langmarl.p2p.resume`): ``loop_history.json`` is the session's commit
record. An iteration listed there has its inputs on disk; one listed with an intent score
was judged and has ``outcome.json``; the next iteration's inputs are written before the
history lists it. Whatever is on disk beyond the history (a half-trained iteration, a
metrics line written just before a kill) is redone or dropped on resume.
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
from langmarl.p2p.contracts import (
    IterationOutcome,
    IterationStatus,
    JudgmentResult,
    RewardSpec,
    SessionStatus,
    TrainSummary,
)
from langmarl.p2p.train_config import TrainConfig
from langmarl.store.catalog import P2P_STATUS
from langmarl.store.run import RunDir

INPUT_FILES = ("prompt.txt", "reward_fn.py", "reward_spec.json", "config.json")
"""An iteration's inputs; every other file in its directory is an output of training it."""

M = TypeVar("M", bound=BaseModel)


def _read_json(path: Path) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:  # corrupt JSON or not UTF-8: treated as absent, as a torn write would be
        return None


def _read_model(path: Path, model: type[M]) -> M | None:
    data = _read_json(path)
    return None if data is None else model.model_validate(data)


def _status_payload(status: str, error: str | None) -> dict[str, Any]:
    return {"status": status, "error": error, "updated_at": time.time()}


@dataclass
class IterationInputs:
    """What one iteration trains on."""

    source: str
    """The reward code."""
    spec: RewardSpec
    """What the reward claims to compute, and who wrote it."""
    config: TrainConfig


class _Record:
    """A directory of the on-disk contract whose files pass ``redact`` when written."""

    def __init__(self, path: str | Path, redact: Redactor | None = None) -> None:
        self.path = Path(path)
        self.redact = redact if redact is not None else Redactor(environment_secrets())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"


class IterationRecord(_Record):
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
            found = sorted(self.path.glob(pattern), key=lambda p: _step_of(p.stem))
            if found:
                return found[-1]
        return None

    def read_config(self) -> dict[str, Any] | None:
        return _read_json(self.config_path)

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
        return _read_json(self.status_path)

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


def _step_of(stem: str) -> int:
    tail = stem.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else -1


class SessionRecord(_Record):
    """One session directory (``runs/<session_id>/``).

    Args:
        path: The directory.
        redact: Scrubs secrets from every file written here and in its iterations
            (default: the environment's secrets).
    """

    def __init__(self, path: str | Path, redact: Redactor | None = None) -> None:
        super().__init__(path, redact)
        self.session_id = self.path.name
        self.history_path = self.path / "loop_history.json"
        self.metadata_path = self.path / "metadata.json"
        self.analysis_path = self.path / "analysis.json"
        self.run = RunDir(self.path, self.redact)  # kind p2p: its resume command

    def start(self, intent: str, env_id: str, config: dict[str, Any]) -> None:
        """Open the session: ``run.json`` (kind ``p2p``) and status ``running``."""
        self.run.start("p2p", config=config, prompt=intent, env_id=env_id)
        self.set_status("running")

    def set_status(self, status: SessionStatus, error: str | None = None) -> None:
        """Record the session's status in ``run.json``: the run status and the session's
        own as ``outcome`` (a session that was never started records nothing)."""
        if not self.run.exists():
            return
        if P2P_STATUS[status] != "running":  # the event first, as RunDir.finish does
            self.run.event("run_end", status=P2P_STATUS[status], outcome=status, error=error)
        self.run.update(status=P2P_STATUS[status], outcome=status, error=error)

    def record_iteration(
        self, number: int, intent_score: float | None, mean_return: float | None,
        best_score: float | None,
    ) -> None:  # fmt: skip
        """A judged iteration: its line of ``metrics.jsonl`` and the progress in ``run.json``."""
        self.run.log_metrics(number, intent_score=intent_score, mean_return=mean_return)
        self.run.update(iterations=number, best_score=best_score)

    def read_status(self) -> dict[str, Any] | None:
        """The session's own status (``outcome`` in ``run.json``), its error and times."""
        info = self.run.read()
        if info is None:
            return None
        fields = ("error", "updated_at", "heartbeat_at")
        return {"status": info.get("outcome") or info.get("status")} | {
            key: info.get(key) for key in fields
        }

    def touch_heartbeat(self) -> None:
        """Record that the loop is alive (``heartbeat_at`` in ``run.json``)."""
        self.run.update(heartbeat_at=time.time())

    def save_history(self, data: dict[str, Any]) -> None:
        self.redact.write_json(self.history_path, data)

    def read_history(self) -> dict[str, Any] | None:
        return _read_json(self.history_path)

    def read_metadata(self) -> dict[str, Any]:
        return _read_json(self.metadata_path) or {}

    def save_metadata(self, data: dict[str, Any]) -> None:
        self.redact.write_json(self.metadata_path, data)

    def update_metadata(self, **kwargs: Any) -> dict[str, Any]:
        data = {**self.read_metadata(), **kwargs}
        self.save_metadata(data)
        return data

    def save_analysis(self, data: dict[str, Any]) -> None:
        self.redact.write_json(self.analysis_path, data)

    def read_analysis(self) -> dict[str, Any] | None:
        return _read_json(self.analysis_path)

    def iteration_records(self) -> list[IterationRecord]:
        """The ``iter_N`` records in iteration order."""
        dirs = [p for p in self.path.glob("iter_*") if p.is_dir()]
        return [
            IterationRecord(p, self.redact) for p in sorted(dirs, key=lambda p: _step_of(p.name))
        ]

    def get_iteration(self, iteration_id: str) -> IterationRecord | None:
        path = self.path / iteration_id
        return IterationRecord(path, self.redact) if path.is_dir() else None

    def iteration(self, number: int) -> IterationRecord:
        """``iter_<number>`` (not created)."""
        return IterationRecord(self.path / f"iter_{number}", self.redact)

    def new_iteration(self, number: int) -> IterationRecord:
        """Create and return an empty ``iter_<number>`` (the files of an attempt the
        history never listed are removed first)."""
        record = self.iteration(number)
        shutil.rmtree(record.path, ignore_errors=True)
        record.path.mkdir(parents=True)
        return record


SESSION_COLUMNS = ("iteration", "intent_score", "mean_return", "reward_origin", "error")


def session_details(run: Path) -> dict[str, Any]:
    """What ``langmarl runs show`` adds for a session: its iterations with their scores, the
    best one and the session's own status (``outcome``)."""
    history = SessionRecord(run).read_history() or {}
    return {
        "iterations": [
            {k: it.get(k) for k in SESSION_COLUMNS} for it in history.get("iterations", [])
        ],
        "best_iteration": history.get("best_iteration"),
        "outcome": history.get("status"),
    }
