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

Resuming (:mod:`langmarl.p2p.session.resume`): ``loop_history.json`` is the session's commit
record. An iteration listed there has its inputs on disk; one listed with an intent score
was judged and has ``outcome.json``; the next iteration's inputs are written before the
history lists it. Whatever is on disk beyond the history (a half-trained iteration, a
metrics line written just before a kill) is redone or dropped on resume.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from langmarl.core.secrets import Redactor
from langmarl.p2p.session.contracts import SessionStatus
from langmarl.p2p.session.iteration_record import (
    INPUT_FILES,
    IterationInputs,
    IterationRecord,
    RecordDir,
    read_json_or_none,
    step_of,
)
from langmarl.store.catalog import P2P_STATUS
from langmarl.store.run import RunDir

__all__ = [
    "INPUT_FILES",
    "IterationInputs",
    "IterationRecord",
    "SessionRecord",
    "session_details",
]
"""``IterationRecord`` and ``IterationInputs`` live in :mod:`.iteration_record`; they are named
here too because a session's record and its iterations' are read together."""


class SessionRecord(RecordDir):
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
        return read_json_or_none(self.history_path)

    def read_metadata(self) -> dict[str, Any]:
        return read_json_or_none(self.metadata_path) or {}

    def save_metadata(self, data: dict[str, Any]) -> None:
        self.redact.write_json(self.metadata_path, data)

    def update_metadata(self, **kwargs: Any) -> dict[str, Any]:
        data = {**self.read_metadata(), **kwargs}
        self.save_metadata(data)
        return data

    def save_analysis(self, data: dict[str, Any]) -> None:
        self.redact.write_json(self.analysis_path, data)

    def read_analysis(self) -> dict[str, Any] | None:
        return read_json_or_none(self.analysis_path)

    def iteration_records(self) -> list[IterationRecord]:
        """The ``iter_N`` records in iteration order."""
        dirs = [p for p in self.path.glob("iter_*") if p.is_dir()]
        return [
            IterationRecord(p, self.redact) for p in sorted(dirs, key=lambda p: step_of(p.name))
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
