"""The ``Tracker`` protocol, the group that fans out to several, and flattening.

Decisions on the edge cases, taken once here for every tracker:

- Only real numbers are metrics: ``int`` and ``float`` (NaN and ±inf included, the trackers
  store them), never ``bool`` (a flag is not a curve), strings, lists or ``None`` — those
  are skipped without a word, since a metrics line legitimately mixes them in.
- Nested dicts are flattened with ``/`` (``{"reward": {"mean": 1}}`` → ``reward/mean``), the
  separator TensorBoard, MLflow, W&B and Trackio all group charts by.
- The ``step`` key of a metrics record is the step, never a metric.
- Parameters (the run's config) keep every leaf: numbers, strings, booleans and ``None`` as
  they are, lists as JSON text; nested dicts flattened with ``/`` too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from langmarl.core.errors import ConfigError


@runtime_checkable
class Tracker(Protocol):
    """An experiment tracker a run reports to.

    Contract: ``log`` gets flat ``name -> number`` dicts (see :func:`flatten_metrics`) and
    a step that is an ``int >= 0``, in the order the run produced them; ``log_params`` may be
    called once, before or after logging; ``close`` flushes and is safe to call twice.
    """

    name: str
    """The ``report_to`` name of the tracker (``"tensorboard"``, ``"mlflow"``, …)."""

    def log(self, metrics: dict[str, float], step: int) -> None:
        """Record ``metrics`` at ``step``."""

    def log_params(self, config: dict[str, Any]) -> None:
        """Record the run's configuration (nested dicts allowed)."""

    def close(self) -> None:
        """Flush and release the tracker; later calls do nothing."""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _leaves(value, f"{name}/")
        else:
            yield name, value


def flatten_metrics(record: Mapping[str, Any]) -> dict[str, float]:
    """The numeric leaves of ``record`` under ``/``-joined names, without ``step``."""
    return {
        name: float(value)
        for name, value in _leaves({k: v for k, v in record.items() if k != "step"})
        if _is_number(value)
    }


def flatten_params(config: Mapping[str, Any]) -> dict[str, Any]:
    """Every leaf of ``config`` under ``/``-joined names; lists and tuples as JSON text."""
    return {
        name: json.dumps(value, default=str) if isinstance(value, list | tuple) else value
        for name, value in _leaves(config)
    }


def record_step(record: Mapping[str, Any]) -> int:
    """The ``step`` of a metrics record.

    Raises:
        ConfigError: if the record has no step, or one that is not an integer ``>= 0``.
    """
    step = record.get("step")
    if isinstance(step, float) and math.isfinite(step) and step.is_integer():
        step = int(step)
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ConfigError(
            f"a metrics record needs 'step': an integer >= 0, got {step!r} "
            f"(keys: {sorted(record)[:8]}); every line of metrics.jsonl is keyed by step"
        )
    return step


class TrackerGroup:
    """Several trackers behind one :class:`Tracker`: each call goes to every tracker.

    Args:
        trackers: The trackers, in ``report_to`` order (may be empty: then nothing happens).
    """

    name = "group"

    def __init__(self, trackers: Sequence[Tracker] = ()) -> None:
        self.trackers = list(trackers)

    def __iter__(self) -> Iterator[Tracker]:
        return iter(self.trackers)

    def __len__(self) -> int:
        return len(self.trackers)

    def log(self, metrics: dict[str, float], step: int) -> None:
        for tracker in self.trackers:
            tracker.log(metrics, step)

    def log_params(self, config: dict[str, Any]) -> None:
        for tracker in self.trackers:
            tracker.log_params(config)

    def log_record(self, record: Mapping[str, Any]) -> None:
        """Log one metrics record (a line of ``metrics.jsonl``: ``step`` plus any series,
        nested or not); a record without numbers logs nothing.

        Raises:
            ConfigError: for a missing or invalid ``step``.
        """
        step = record_step(record)
        metrics = flatten_metrics(record)
        if metrics:
            self.log(metrics, step)

    def close(self) -> None:
        """Close every tracker, even when one fails (the first error is raised after)."""
        errors = []
        for tracker in self.trackers:
            try:
                tracker.close()
            except Exception as exc:  # one broken tracker must not leave the others open
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> TrackerGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
