"""Replay a run's ``metrics.jsonl`` into trackers: export a finished run after the fact."""

from __future__ import annotations

from pathlib import Path

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
