"""PARL runs: the orchestrator's GRPO in weight space (``langmarl parl grpo``).

Read from ``parl_curves.json`` (``langmarl/parl/curves.py``): its ``curve`` holds per step
the mean ``total_reward``, ``r_perf``, ``accuracy``, ``lambda1``, ``critical_steps``,
``serial_steps``, ``num_subagents`` and ``speedup``. A language-space PARL run writes the same
file into its store run directory; :func:`step_panels` serves both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmarl.parl.curves import CURVES_FILE
from langmarl.plots.files import RunFiles
from langmarl.plots.series import Panel, RunKind, RunPlot, column, smoothed


def detect(run_dir: Path) -> bool:
    """A GRPO orchestrator run: it has ``parl_curves.json`` (and no ``run.json``, which
    makes it a language-space run; that kind is tried first)."""
    return (run_dir / CURVES_FILE).is_file()


def reward_panel(curve: list[dict[str, Any]], xlabel: str) -> Panel:
    """The PARL reward (with a running mean once there are enough points), its task term
    ``r_perf``, accuracy, and the annealed ``λ1``."""
    series = [
        *smoothed(column(curve, "total_reward", "step", "total reward"), f"{xlabel}s"),
        column(curve, "r_perf", "step", "r_perf (task outcome)"),
        column(curve, "accuracy", "step", "accuracy", "dashed"),
        column(curve, "lambda1", "step", "λ1 (weight of r_parallel)", "dashed"),
    ]
    return Panel(f"PARL reward per {xlabel}", "reward", series, xlabel)


def step_panels(curve: list[dict[str, Any]], xlabel: str) -> list[Panel]:
    """Critical vs serial steps, and sub-agents spawned with the resulting speedup."""
    steps = [
        column(curve, "critical_steps", "step", "critical steps"),
        column(curve, "serial_steps", "step", "serial steps", "dashed"),
    ]
    parallel = [
        column(curve, "num_subagents", "step", "sub-agents per episode"),
        column(curve, "speedup", "step", "speedup (serial / critical)", "dashed"),
    ]
    return [
        Panel("Critical vs serial steps", "steps per episode", steps, xlabel),
        Panel("Parallelism", "count / ratio", parallel, xlabel),
    ]


def build(files: RunFiles) -> RunPlot:
    """Reward terms, critical vs serial steps and parallelism per GRPO step."""
    document = files.json(CURVES_FILE)
    curve = document.get("curve") if isinstance(document, dict) else None
    if document is not None and not isinstance(curve, list):
        files.note(f"{files.root / CURVES_FILE} has no 'curve' list")
    curve = [p for p in curve or [] if isinstance(p, dict)]
    panels = [reward_panel(curve, "step"), *step_panels(curve, "step")]
    return RunPlot(files.root, "parl", "PARL orchestrator GRPO (weight space)", panels)


KIND = RunKind(
    name="parl",
    expected="parl_curves.json (langmarl parl grpo)",
    empty="parl_curves.json has no step yet",
    detect=detect,
    build=build,
)
