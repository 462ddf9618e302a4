"""Language-space runs (``langmarl train``, ``langmarl parl train``): the store's layout.

Read from the run directory (layout: ``langmarl/store/local.py``):

- ``metrics.json``: per finished iteration ``avg_reward``/``min_reward``/``max_reward``, and
  when the trainer records them ``accepted_updates``/``rejected_updates`` and
  ``validation_score`` (a number, or one per agent; ``None`` when nothing was validated) —
  absent keys simply leave their panel out;
- ``metrics.json`` of a pool search (``search: pool``) also has ``candidate_scores``: the
  validation score of every candidate a round proposed, drawn as points beside the pool's
  best (``validation_score``);
- ``evals/<split>_iter_NNNN.json``: held-out evaluations of checkpoint N, drawn at x = N (the
  policies after N iterations);
- ``parl_curves.json`` (language-space PARL): critical vs serial steps and parallelism.

Iterations are numbered from 1, as the CLI and the dashboard number them: iteration N (the
files' 0-based ``iteration`` N − 1) is drawn at x = N and produces checkpoint N.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.parl.curves import CURVES_FILE
from langmarl.plots.files import RunFiles
from langmarl.plots.parl import step_panels
from langmarl.plots.series import Panel, RunKind, RunPlot, Series, column, number
from langmarl.store.local import RUN_FILE, LocalStore

METRICS_FILE = "metrics.json"
EVAL_FILE = re.compile(r"^(?P<split>.+)_iter_(?P<iteration>\d+)\.json$")


def numbered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` with their 0-based ``iteration`` counted from 1."""
    return [
        {**r, "iteration": r["iteration"] + 1} if isinstance(r.get("iteration"), int) else r
        for r in records
    ]


def detect(run_dir: Path) -> bool:
    """A store run: it has ``run.json``."""
    return (run_dir / RUN_FILE).is_file()


def held_out(files: RunFiles) -> list[Series]:
    """One marker series per split of ``evals/``: ``avg_reward`` at the checkpoint."""
    points: dict[str, list[tuple[float, float]]] = {}
    folder = files.root / "evals"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        match = EVAL_FILE.match(path.name)
        result = files.json(path) if match else None
        value = number(result.get("avg_reward")) if isinstance(result, dict) else None
        if match and value is not None:
            points.setdefault(match["split"], []).append((float(match["iteration"]), value))
    series = []
    for split, found in sorted(points.items()):
        found.sort()
        series.append(
            Series(f"held-out {split}", [x for x, _ in found], [y for _, y in found], "markers")
        )
    return series


def key_series(records: list[dict[str, Any]], key: str, label: str) -> list[Series]:
    """``record[key]`` per iteration: one series if it is a number, one per sub-key (agent)
    if it is a mapping of numbers."""
    if not any(isinstance(r.get(key), Mapping) for r in records):
        return [column(records, key, "iteration", label)]
    names = sorted({name for r in records if isinstance(r.get(key), Mapping) for name in r[key]})
    flat = [
        {"iteration": r.get("iteration"), **{n: r[key].get(n) for n in names}}
        for r in records
        if isinstance(r.get(key), Mapping)
    ]
    return [column(flat, name, "iteration", name) for name in names]


def candidate_points(records: list[dict[str, Any]]) -> list[Series]:
    """The validation score of every candidate of a pool search, at its round (none for
    other runs)."""
    xs, ys = [], []
    for record in records:
        scores = record.get("candidate_scores")
        if not isinstance(scores, Mapping):
            continue
        for value in scores.values():
            if number(value) is not None:
                xs.append(float(record.get("iteration", 0)))
                ys.append(float(value))
    return [Series("candidates proposed", xs, ys, "markers")] if xs else []


def _status(run_dir: Path) -> str | None:
    """The run's status as the store tells it (a dead ``running`` run reads ``failed``)."""
    try:
        return str(LocalStore(run_dir.parent).run_info(run_dir.name).get("status"))
    except (ConfigError, ValueError):
        return None


def build(files: RunFiles) -> RunPlot:
    """Reward per iteration (mean, min, max, held-out), prompt updates accepted and
    rejected, validation score, and the PARL panels when the run has ``parl_curves.json``."""
    metrics = numbered(files.records(METRICS_FILE))
    reward = [
        column(metrics, "avg_reward", "iteration", "mean reward"),
        column(metrics, "min_reward", "iteration", "min", "dashed"),
        column(metrics, "max_reward", "iteration", "max", "dashed"),
        *held_out(files),
    ]
    panels = [
        Panel("Reward per iteration", "reward", reward),
        Panel(
            "Prompt updates",
            "policies per iteration",
            [
                *key_series(metrics, "accepted_updates", "accepted"),
                *key_series(metrics, "rejected_updates", "rejected (failed validation)"),
            ],
        ),
        Panel(
            "Validation score",
            "score",
            [
                *key_series(metrics, "validation_score", "validation"),
                *candidate_points(metrics),
            ],
        ),
    ]
    curves = files.json(CURVES_FILE)
    if isinstance(curves, dict) and isinstance(curves.get("curve"), list):
        panels += step_panels(numbered(curves["curve"]), "iteration")
    status = _status(files.root)
    label = "language space" + (f" ({status})" if status else "")
    return RunPlot(files.root, "language", label, panels)


KIND = RunKind(
    name="language",
    expected="run.json + metrics.json (langmarl train, langmarl parl train)",
    empty="metrics.json lists no finished iteration yet (the first one may still be running)",
    detect=detect,
    build=build,
)
