"""Weight-space runs (MAGRPO, IAC, MAAC: ``langmarl magrpo train``).

Read from the run's ``output_dir`` (written by ``langmarl/magrpo/base.py``):

- ``run.json``'s ``config`` (older runs: ``config.json``): the trainer config with
  ``algorithm`` and ``num_turns``;
- ``metrics.jsonl``: one line per logged step with ``step``, ``reward_mean``,
  ``return_mean``, per agent ``agent-i/completion_tokens`` (MAGRPO) and ``agent-i/kl``
  (when ``beta > 0``), per critic ``critic-i/value_loss`` (IAC, MAAC);
- ``eval.jsonl``: ``eval_return`` of the greedy evaluations on held-out examples;
- ``heldout.json`` when ``langmarl magrpo train`` wrote one: the mean held-out return of the
  untrained agents (drawn at step 0) and of the trained ones (at the last step). Read
  leniently: a report of another shape is left out, never an error.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from langmarl.plots.files import RunFiles
from langmarl.plots.series import (
    Panel,
    RunKind,
    RunPlot,
    Series,
    column,
    number,
    smoothed,
    suffix_columns,
)
from langmarl.store import kinds

RUN_FILE = "run.json"
CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.jsonl"
EVAL_FILE = "eval.jsonl"
HELDOUT_FILE = "heldout.json"


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _config(run_dir: Path) -> dict[str, Any]:
    """The trainer config: ``run.json``'s ``config``, else ``config.json`` (older runs);
    ``{}`` if neither is readable (detection must not fail)."""
    record = _read(run_dir / RUN_FILE)
    config = record.get("config") if isinstance(record, dict) else None
    if not isinstance(config, dict) or "algorithm" not in config:
        config = _read(run_dir / CONFIG_FILE)
    return config if isinstance(config, dict) else {}


def _algorithm(run_dir: Path) -> str | None:
    algorithm = _config(run_dir).get("algorithm")
    return algorithm if is_weight_kind(algorithm) else None


def is_weight_kind(name: Any) -> bool:
    """Whether ``name`` is a kind of run the weight view shows (MAGRPO, IAC, MAAC, …)."""
    spec = kinds.find(name) if isinstance(name, str) else None
    return spec is not None and spec.view == "weight"


def detect(run_dir: Path) -> bool:
    """A weight-space run: ``metrics.jsonl``, or a ``config.json`` naming the algorithm."""
    return (run_dir / METRICS_FILE).is_file() or _algorithm(run_dir) is not None


def heldout_series(report: Any, last_step: float) -> Series:
    """``before``/``after`` mean returns of a held-out report at step 0 / ``last_step``."""
    xs, ys = [], []
    for key, x in (("before", 0.0), ("after", last_step)):
        part = report.get(key) if isinstance(report, dict) else None
        interval = part.get("interval") if isinstance(part, dict) else None
        mean = number(interval.get("mean")) if isinstance(interval, dict) else None
        if mean is not None:
            xs.append(x)
            ys.append(mean)
    return Series("held-out (untrained → trained)", xs, ys, "markers")


def reward_panel(
    metrics: list[dict[str, Any]], evals: list[dict[str, Any]], turns: int | None
) -> Panel:
    """Reward per step (with its running mean), the return over all turns when there are
    several (``turns`` from the config; unknown: when it differs from the reward), and the
    evaluation returns (``evals``: rows of ``eval.jsonl``)."""
    reward = column(metrics, "reward_mean", "step", "reward")
    returns = column(metrics, "return_mean", "step", "return (all turns)", "dashed")
    if turns is None:  # no config: a second turn shows as a return unlike the reward
        pairs = zip(reward.y, returns.y, strict=False)
        turns = 1 if all(math.isclose(a, b) for a, b in pairs) else 2
    if turns > 1:
        reward = Series("reward (turn 1)", reward.x, reward.y)
    series = [*smoothed(reward), *([returns] if turns > 1 else [])]
    series.append(column(evals, "eval_return", "step", "eval return", "markers"))
    return Panel("Reward per step", "reward", series, "step")


def build(files: RunFiles) -> RunPlot:
    """Reward per step with a running mean and the evaluations; KL, completion length and
    critic loss per agent when recorded."""
    metrics = files.jsonl(METRICS_FILE)
    config = _config(files.root)
    turns = config.get("num_turns")
    turns = turns if isinstance(turns, int) else None
    reward = reward_panel(metrics, files.jsonl(EVAL_FILE), turns)
    last_step = max((x for series in reward.series for x in series.x), default=0.0)
    reward.series.append(heldout_series(files.json(HELDOUT_FILE), last_step))
    panels = [
        reward,
        Panel("KL to the reference", "KL", suffix_columns(metrics, "kl", "step"), "step"),
        Panel(
            "Completion length",
            "tokens per completion",
            suffix_columns(metrics, "completion_tokens", "step"),
            "step",
        ),
        Panel("Critic value loss", "loss", suffix_columns(metrics, "value_loss", "step"), "step"),
    ]
    algorithm = _algorithm(files.root)
    label = f"weight space ({algorithm.upper()})" if algorithm else "weight space"
    return RunPlot(files.root, "weight", label, panels)


KIND = RunKind(
    name="weight",
    expected="config.json with 'algorithm' + metrics.jsonl (+ eval.jsonl) (langmarl magrpo train)",
    empty="metrics.jsonl has no step yet (it is written every logging_steps)",
    detect=detect,
    build=build,
)
