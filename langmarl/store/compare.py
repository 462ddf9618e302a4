"""Runs side by side: their summaries, what their configs set differently, their metrics.

What ``langmarl runs compare A B …`` prints and what a dashboard can draw: the question after
two runs is always "what did I change, and what did it do". The config diff answers the
first (only the settings whose values differ, as dotted keys), the metrics table the second
(each numeric series' last and best value per run, for the series every run has).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langmarl.core.files import read_jsonl
from langmarl.store.catalog import RunSummary, describe
from langmarl.store.run import METRICS_FILE

MISSING = "—"
"""How a setting or a series a run does not have is shown."""


@dataclass
class SeriesSummary:
    """One numeric metrics series of one run."""

    last: float
    low: float
    high: float
    points: int


@dataclass
class Comparison:
    """Runs compared. Every list is in the order the runs were given."""

    runs: list[RunSummary]
    config_diff: dict[str, list[str]] = field(default_factory=dict)
    """Dotted setting → each run's value as text (:data:`MISSING` where unset), only for the
    settings whose values differ."""
    series: dict[str, list[SeriesSummary]] = field(default_factory=dict)
    """Metrics key → each run's summary, for the numeric keys every run has."""


def compare_runs(paths: list[Path]) -> Comparison:
    """Compare the runs at ``paths`` (two or more run directories)."""
    configs = [flat_config(path) for path in paths]
    keys = sorted(set().union(*configs))
    diff = {
        key: [_text(config.get(key, MISSING)) for config in configs]
        for key in keys
        if len({_text(config.get(key, MISSING)) for config in configs}) > 1
    }
    per_run = [numeric_series(path) for path in paths]
    shared = sorted(set.intersection(*(set(s) for s in per_run))) if per_run else []
    return Comparison(
        runs=[describe(path) for path in paths],
        config_diff=diff,
        series={key: [series[key] for series in per_run] for key in shared},
    )


def flat_config(run: Path) -> dict[str, Any]:
    """The run's config (``run.json``'s, else an old layout's ``config.json``) as dotted keys;
    ``run_id`` and ``resume`` left out (they differ between any two runs)."""
    record = _json(run / "run.json")
    config = record.get("config") if isinstance(record, dict) else None
    if not isinstance(config, dict):
        config = _json(run / "run_config.json") or _json(run / "config.json") or {}
    flat: dict[str, Any] = {}
    _flatten(config if isinstance(config, dict) else {}, "", flat)
    for key in ("run_id", "resume"):
        flat.pop(key, None)
    return flat


def _flatten(value: dict[str, Any], prefix: str, into: dict[str, Any]) -> None:
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and item:
            _flatten(item, name + ".", into)
        else:
            into[name] = item


def numeric_series(run: Path) -> dict[str, SeriesSummary]:
    """Each metrics key whose values are numbers (not ``step``, not booleans)."""
    values: dict[str, list[float]] = {}
    for record in read_jsonl(run / METRICS_FILE):
        if not isinstance(record, dict):
            continue
        for key, value in record.items():
            if key == "step" or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if math.isfinite(value):
                values.setdefault(key, []).append(float(value))
    return {
        key: SeriesSummary(last=found[-1], low=min(found), high=max(found), points=len(found))
        for key, found in values.items()
    }


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
