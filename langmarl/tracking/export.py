"""A run's ``metrics.jsonl`` into trackers: :func:`replay` exports a finished run after the
fact, :func:`reporting` follows a run while it trains (each step sent once)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError, RunFileError
from langmarl.core.files import read_jsonl
from langmarl.tracking.base import Tracker, TrackerGroup, flatten_metrics, record_step


def replay(metrics_jsonl_path: str | Path, trackers: Tracker | list[Tracker]) -> int:
    """Log every record of ``metrics_jsonl_path`` (one JSON object per line, keyed by
    ``step``) to ``trackers``, in file order; the trackers are left open.

    A torn last line (a crash mid-write) is skipped, as everywhere runs are read.

    Returns:
        The number of records replayed.

    Raises:
        RunFileError: if the file is missing, a line before the last is not JSON, or a
            record is not an object or has no valid ``step``.
    """
    path = Path(metrics_jsonl_path)
    if not path.is_file():
        raise RunFileError(path, "no such metrics file", "Give the metrics.jsonl of a run.")
    group = (
        trackers
        if isinstance(trackers, TrackerGroup)
        else TrackerGroup(trackers if isinstance(trackers, list) else [trackers])
    )
    records = read_jsonl(path)
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise RunFileError(
                path, f"record {number} is a {type(record).__name__}, not an object", _FIX
            )
        try:
            step = record_step(record)
        except ConfigError as exc:
            raise RunFileError(path, f"record {number}: {exc}", _FIX) from None
        metrics = flatten_metrics(record)
        if metrics:
            group.log(metrics, step)
    return len(records)


_FIX = "Each line must be a JSON object with an integer 'step'; fix or delete that line."


class MetricsFollower:
    """Sends the records of a growing ``metrics.jsonl`` to trackers, each step once.

    Records already in the file when the follower starts (the steps a resumed run finished
    before) are not sent again; call :meth:`sync` after each write of the file and
    :meth:`close` at the end.

    Args:
        path: The run's ``metrics.jsonl``.
        group: The trackers (an empty group makes :meth:`sync` a no-op).
    """

    def __init__(self, path: str | Path, group: TrackerGroup) -> None:
        self.path = Path(path)
        self.group = group
        steps = [step for step in map(_step, self._records()) if step is not None]
        self.sent_step: int | None = max(steps, default=None)

    def _records(self) -> list[Any]:
        return read_jsonl(self.path) if self.group.trackers and self.path.is_file() else []

    def send(self, record: Any) -> bool:
        """Log one record if its step is after the last one sent (for a writer that appends
        one line at a time: no re-reading of the file); returns whether it was sent."""
        step = _step(record)
        if step is None or (self.sent_step is not None and step <= self.sent_step):
            return False
        self.group.log_record(record)
        self.sent_step = step
        return True

    def sync(self) -> int:
        """Log the file's records whose step is after the last one sent (for a writer that
        rewrites the file); returns how many."""
        return sum(self.send(record) for record in self._records())

    def close(self) -> None:
        """Send what is left, then close the trackers."""
        try:
            self.sync()
        finally:
            self.group.close()


def _step(record: Any) -> int | None:
    if not isinstance(record, dict):
        return None
    try:
        return record_step(record)
    except ConfigError:
        return None


@contextlib.contextmanager
def reporting(
    report_to: str | list[str] | None,
    run_dir: str | Path,
    run_name: str,
    config: dict[str, Any] | None = None,
) -> Iterator[MetricsFollower]:
    """The trackers ``report_to`` names, following ``<run_dir>/metrics.jsonl`` for the
    block's length (closed at its end, whatever happens). ``"none"``/``[]`` builds nothing.

    Raises:
        ConfigError, MissingDependencyError: as :func:`make_trackers`, before the block runs.
    """
    from langmarl.tracking.factory import make_trackers

    group = make_trackers(report_to, run_dir, run_name, config)
    follower = MetricsFollower(Path(run_dir) / "metrics.jsonl", group)
    try:
        yield follower
    finally:
        follower.close()
