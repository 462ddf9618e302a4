"""Reward and critical-step curves: per-episode rows and their per-step summary (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from statistics import fmean
from typing import Any

CURVES_FILE = "parl_curves.json"
"""``{"curve": summarize(rows), "episodes": rows}``, rewritten atomically after every step
(in the run directory)."""

ROW_KEYS = (
    "total_reward", "r_parallel", "r_finish", "r_perf", "lambda1", "lambda2",
    "num_subagents", "assigned_subtasks", "completed_subtasks",
    "critical_steps", "serial_steps", "accuracy", "success",
)  # fmt: skip
"""The numbers each episode row carries (besides ``step``, ``task_id``, ``plan_status``)."""


def episode_row(step: int, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """One curve row from a trajectory's metadata (as ``ParallelTasksEnv`` writes it)."""
    parl = metadata.get("parl", {})
    row: dict[str, Any] = {"step": step, "task_id": metadata.get("task_id", "")}
    for key in ROW_KEYS:
        value = parl.get(key, metadata.get(key, 0.0))
        row[key] = float(value) if not isinstance(value, bool) else value
    row["plan_status"] = metadata.get("plan_status", "")
    return row


def summarize(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per step: episode count and the mean of every number; ``speedup`` is
    ``mean serial steps / mean critical steps`` (1.0 means no parallelism)."""
    by_step: dict[int, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_step.setdefault(int(row["step"]), []).append(row)
    curve = []
    for step in sorted(by_step):
        group = by_step[step]
        point: dict[str, Any] = {"step": step, "episodes": len(group)}
        for key in ROW_KEYS:
            point[key] = round(fmean(float(r[key]) for r in group), 6)
        critical = point["critical_steps"]
        point["speedup"] = round(point["serial_steps"] / critical, 6) if critical else 1.0
        curve.append(point)
    return curve


def curves_document(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What :data:`CURVES_FILE` holds."""
    return {"curve": summarize(rows), "episodes": rows}


def first_last_means(
    curve: list[Mapping[str, Any]], k: int, keys: Iterable[str]
) -> dict[str, dict[str, float]]:
    """Per key: the mean over the first ``k`` and the last ``k`` curve points, and their
    difference (``{"first": …, "last": …, "change": last - first}``).

    Raises:
        ValueError: if ``k < 1`` or the curve has fewer than ``2k`` points (the windows
            would overlap and the comparison would mean nothing).
    """
    if k < 1 or len(curve) < 2 * k:
        raise ValueError(
            f"first/last windows of k={k} need at least {2 * max(k, 1)} curve points, got "
            f"{len(curve)}; train longer or pass a smaller k"
        )
    result = {}
    for key in keys:
        first = fmean(float(point[key]) for point in curve[:k])
        last = fmean(float(point[key]) for point in curve[-k:])
        result[key] = {"first": round(first, 4), "last": round(last, 4),
                       "change": round(last - first, 4)}  # fmt: skip
    return result
