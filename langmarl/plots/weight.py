"""Weight-space runs (MAGRPO, IAC, MAAC: ``langmarl magrpo train``).

Read from the run's ``output_dir`` (written by ``langmarl/magrpo/base.py``):

- ``config.json``: the trainer config with ``algorithm``;
- ``metrics.jsonl``: one line per logged step with ``step``, ``reward_mean``,
  ``return_mean``, per agent ``agent-i/completion_tokens`` (MAGRPO) and ``agent-i/kl``
  (when ``beta > 0``), per critic ``critic-i/value_loss`` (IAC, MAAC);
- ``eval.jsonl``: ``eval_return`` of the greedy evaluations on held-out examples.
"""

from __future__ import annotations

import json
from pathlib import Path

from langmarl.plots.files import RunFiles
from langmarl.plots.series import (
    Panel,
    RunKind,
    RunPlot,
    Series,
    column,
    running_mean,
    smoothing_window,
    suffix_columns,
)

METRICS_FILE = "metrics.jsonl"
EVAL_FILE = "eval.jsonl"
ALGORITHMS = ("magrpo", "iac", "maac")


def _algorithm(run_dir: Path) -> str | None:
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    algorithm = config.get("algorithm") if isinstance(config, dict) else None
    return algorithm if algorithm in ALGORITHMS else None


def detect(run_dir: Path) -> bool:
    """A weight-space run: ``metrics.jsonl``, or a ``config.json`` naming the algorithm."""
    return (run_dir / METRICS_FILE).is_file() or _algorithm(run_dir) is not None


def reward_series(raw: Series) -> list[Series]:
    """The raw per-step reward, faint under its running mean when there are enough points."""
    window = smoothing_window(len(raw.y))
    if window == 1:
        return [raw]
    smooth = Series(f"running mean ({window} steps)", raw.x, running_mean(raw.y, window))
    return [Series(raw.label, raw.x, raw.y, "faint"), smooth]


def build(files: RunFiles) -> RunPlot:
    """Reward per step with a running mean and the evaluations; KL, completion length and
    critic loss per agent when recorded."""
    metrics = files.jsonl(METRICS_FILE)
    reward = column(metrics, "reward_mean", "step", "reward")
    returns = column(metrics, "return_mean", "step", "return (all turns)", "dashed")
    multi_turn = returns.y != reward.y  # with one turn the return is the reward: drawn once
    if multi_turn:
        reward = Series("reward (turn 1)", reward.x, reward.y)
    rewards = [*reward_series(reward), *([returns] if multi_turn else [])]
    rewards.append(column(files.jsonl(EVAL_FILE), "eval_return", "step", "eval return", "markers"))
    panels = [
        Panel("Reward per step", "reward", rewards, "step"),
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
