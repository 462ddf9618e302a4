"""The runs under a directory, as the API lists them: found by
:func:`langmarl.store.catalog.find_runs`, each summarised once and cached.

A run's entry (its :class:`RunSummary`, step count, a short score series for a sparkline and
its metadata) is kept until one of its files changes (mtime or size of ``run.json``,
``metrics.jsonl``, ``metadata.json`` and the files older layouts are recognised by), so
listing 1,000 runs costs a walk and a few ``stat`` calls per run. A ``running`` run is
never cached: its status depends on whether its process is alive, which no file records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langmarl.core.errors import LangmarlError
from langmarl.core.files import read_jsonl
from langmarl.store import kinds
from langmarl.store.catalog import RunSummary, find_runs, open_run
from langmarl.store.run import METRICS_FILE, RUN_FILE
from langmarl.web.errors import ApiError
from langmarl.web.metadata import METADATA_FILE, RunMetadata, run_metadata

ID_SEPARATOR = "~"
"""Joins the parts of a nested run's path into one URL segment (``group~seed1``)."""
TRASH_DIR = ".trash"
SPARK_POINTS = 32
"""Points of a sparkline (a longer series is sampled evenly, the last point kept)."""
WATCHED = (
    RUN_FILE, METRICS_FILE, METADATA_FILE, "metrics.json", "status.json", "loop_history.json",
    "parl_curves.json", "run_config.json", "config.json", "heldout.json",
)  # fmt: skip
"""A change to any of these (mtime, size, existence) makes a run's entry stale."""
CURRENT_WATCHED = (METRICS_FILE, METADATA_FILE, "heldout.json", "evals/test_compare.json")
"""Beside ``run.json``, what a run of the run contract's entry is read from (its metrics,
metadata and the held-out scores the kinds' ``heldout`` entry points read)."""


@dataclass
class RunEntry:
    """One run as the API lists it."""

    run_id: str
    summary: RunSummary
    steps: int = 0
    """Metrics lines recorded."""
    last_step: int | None = None
    sparkline: list[float] = field(default_factory=list)
    metadata: RunMetadata = field(default_factory=RunMetadata)

    @property
    def path(self) -> Path:
        return self.summary.path

    def as_dict(self) -> dict[str, Any]:
        s = self.summary
        spec = kinds.find(s.kind)
        return {
            "run_id": self.run_id, "kind": s.kind, "status": s.status, "error": s.error,
            "updated_at": s.updated_at, "progress": s.progress, "score": s.score,
            "score_key": spec and spec.score_key, "score_label": s.score_label,
            "view": spec.view if spec else "metrics", "sections": spec and spec.sections,
            "layout": s.layout, "steps": self.steps, "last_step": self.last_step,
            "sparkline": self.sparkline, **self.metadata.model_dump(),
        }  # fmt: skip


def sample_series(values: list[float], points: int = SPARK_POINTS) -> list[float]:
    """At most ``points`` values of ``values``, evenly spaced, first and last kept."""
    if len(values) <= points:
        return list(values)
    last = len(values) - 1
    return [values[round(i * last / (points - 1))] for i in range(points)]


def _mark(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _signature(folder: Path) -> tuple[tuple[int, int] | None, ...]:
    """The marks of the files that decide ``folder``'s entry: with a ``run.json``, only it,
    the metrics and the metadata are read; otherwise every file of :data:`WATCHED`.
    (String paths: ``pathlib`` costs more than the ``stat`` calls at 1,000 runs.)"""
    base = os.fspath(folder) + os.sep
    record = _mark(base + RUN_FILE)
    names = CURRENT_WATCHED if record is not None else WATCHED[1:]
    return (record, *(_mark(base + name) for name in names))


def _entry(run_id: str, summary: RunSummary) -> RunEntry:
    try:
        rows = [r for r in read_jsonl(summary.path / METRICS_FILE) if isinstance(r, dict)]
    except LangmarlError:
        rows = []
    spec = kinds.find(summary.kind)
    key = spec.score_key if spec else "reward_mean"
    scores = [float(r[key]) for r in rows if isinstance(r.get(key), int | float)]
    last = rows[-1].get("step") if rows else None
    return RunEntry(
        run_id=run_id, summary=summary, steps=len(rows),
        last_step=last if isinstance(last, int) else None, sparkline=sample_series(scores),
        metadata=run_metadata(summary.path),
    )  # fmt: skip


class RunIndex:
    """The runs under ``root``, cached per run (see the module docstring).

    Args:
        root: The runs directory.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._cache: dict[Path, tuple[tuple[Any, ...] | None, RunEntry | None]] = {}

    def run_id(self, path: Path, root: Path | None = None) -> str:
        """The URL id of the run in ``path`` (under ``root``, default the index's root)."""
        parts = path.relative_to(root or self.root).parts
        return ID_SEPARATOR.join(parts) if parts else "."

    def _load(self, folder: Path) -> RunEntry | None:
        signature = _signature(folder)
        cached = self._cache.get(folder)
        if cached is not None and cached[0] == signature:
            return cached[1]
        summary = open_run(folder)
        entry = None if summary is None else _entry(self.run_id(folder), summary)
        running = entry is not None and entry.summary.status == "running"
        self._cache[folder] = (None if running else signature, entry)
        return entry

    def _open(self, folder: Path) -> RunSummary | None:
        entry = self._load(folder)
        return None if entry is None else entry.summary

    def _entry_of(self, summary: RunSummary) -> RunEntry:
        cached = self._cache.get(summary.path)
        entry = cached[1] if cached else None
        if entry is not None and entry.summary is summary:
            return entry
        return RunEntry(self.run_id(summary.path), summary)  # unreadable: not cached

    def entries(self) -> list[RunEntry]:
        """Every run under the root, newest first (unreadable runs included)."""
        return [self._entry_of(s) for s in find_runs(self.root, opener=self._open)]

    def path_of(self, run_id: str) -> Path:
        """The directory ``run_id`` names (not checked to hold a run).

        Raises:
            ApiError: 400 for an id that would leave the runs directory; 403 for one behind
                a symlink (not followed, as the listing does not: deleting or purging it
                would reach outside).
        """
        parts = run_id.split(ID_SEPARATOR)
        if any(not p or p in (".", "..") or p.startswith(".") or "/" in p for p in parts):
            raise ApiError(
                400, f"invalid run id {run_id!r}",
                f"use a run id as GET /api/runs lists it (parts joined by {ID_SEPARATOR!r})",
            )  # fmt: skip
        folder = self.root
        for part in parts:
            folder = folder / part
            if folder.is_symlink():
                raise ApiError(
                    403, f"run {run_id!r} lies behind a symlink ({part!r}), which the "
                    "dashboard does not follow",
                    "move the run into the runs directory instead of linking it",
                )  # fmt: skip
        return folder

    def get(self, run_id: str) -> RunEntry:
        """The run ``run_id``.

        Raises:
            ApiError: 404 if there is no run by that id.
        """
        folder = self.path_of(run_id)
        try:
            entry = self._load(folder)
        except LangmarlError as exc:
            unreadable = RunSummary(folder, folder.name, "?", "unreadable", error=str(exc))
            return RunEntry(run_id, unreadable)
        if entry is None:
            raise ApiError(
                404, f"no run {run_id!r} in the runs directory",
                "GET /api/runs lists the run ids (deleted runs: GET /api/trash)",
            )  # fmt: skip
        return entry


def require_view(entry: RunEntry, view: str, has: str, what: str) -> Path:
    """``entry``'s directory, if its kind is shown by the dashboard's ``view``.

    Raises:
        ApiError: 404 naming the kinds that have ``what``, for a run of another kind.
    """
    spec = kinds.find(entry.summary.kind)
    if spec is None or spec.view != view:
        owners = ", ".join(k.name for k in kinds.all_kinds() if k.view == view)
        raise ApiError(
            404, f"run {entry.run_id!r} is a {entry.summary.kind} run: it has no {has}",
            f"{what} belong to {owners} runs",
        )  # fmt: skip
    return entry.path
