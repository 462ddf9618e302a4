"""`TrajectoryFormatter`: episodes as text for the critic."""

from __future__ import annotations

import json
from typing import Any

from langmarl.core.records import Step, Trajectory

MAX_ACTION_CHARS = 1500
"""Longer actions are cut (with a marker) so prompts fit small context windows."""
MINIMAL_CHARS = 200


def _shorten(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f" …[{len(text) - limit} chars cut]"


def as_trajectory(episode: Trajectory | dict[str, Any]) -> Trajectory:
    """Accept a :class:`Trajectory` or a reference-style episode dict (``task``,
    ``transitions`` or ``steps``, ``reward``)."""
    if isinstance(episode, Trajectory):
        return episode
    data = dict(episode)
    if "transitions" in data and "steps" not in data:
        data["steps"] = data.pop("transitions")
    known = set(Trajectory.model_fields)
    extra = {k: v for k, v in data.items() if k not in known}
    data = {k: v for k, v in data.items() if k in known}
    data.setdefault("metadata", {}).update(extra)
    return Trajectory.model_validate(data)


def format_task(task: dict[str, Any]) -> str:
    """The task as ``key: value`` lines; hidden fields (ground truth, tests) are left out."""
    hidden = {"ground_truth", "answer", "solution", "test", "tests", "canonical_solution"}
    lines = []
    for key, value in task.items():
        if key in hidden or key.startswith("_"):
            continue
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        lines.append(f"{key}: {_shorten(text, MAX_ACTION_CHARS)}")
    return "\n".join(lines) or "(no task description)"


def _step_lines(step: Step) -> list[str]:
    """A turn's action (cut short) and, if it failed, its error."""
    lines = [_shorten(step.action, MAX_ACTION_CHARS) or "(no output)"]
    if step.info.get("error"):
        lines.append(f"(error: {step.info['error']})")
    return lines


class TrajectoryFormatter:
    """Formats episodes for LLM evaluation. Every method accepts a :class:`Trajectory` or an
    episode dict."""

    @staticmethod
    def format_trajectory(episode: Trajectory | dict[str, Any]) -> str:
        """The whole episode, turn by turn, for a global evaluation."""
        traj = as_trajectory(episode)
        parts = [f"Task:\n{format_task(traj.task)}", ""]
        for number, step in enumerate(traj.steps, 1):
            parts += [f"Turn {number} — {step.agent_id}:", *_step_lines(step), ""]
        parts.append(f"Final reward: {traj.reward:.3f}")
        return "\n".join(parts)

    @staticmethod
    def format_for_credit_assignment(episode: Trajectory | dict[str, Any]) -> str:
        """The episode with one section per agent (what it saw last and what it did), for
        per-agent credit assignment."""
        traj = as_trajectory(episode)
        parts = [f"Task:\n{format_task(traj.task)}", ""]
        for agent_id in traj.all_agent_ids():
            steps = [s for s in traj.steps if s.agent_id == agent_id]
            parts.append(f"=== Contribution of {agent_id} ===")
            if not steps:
                parts.append("(did not act)")
            parts += [line for step in steps for line in _step_lines(step)]
            parts.append("")
        parts.append(f"Final reward: {traj.reward:.3f}")
        return "\n".join(parts)

    @staticmethod
    def format_trajectory_minimal(episode: Trajectory | dict[str, Any]) -> str:
        """One line per turn, each cut short, plus the reward."""
        traj = as_trajectory(episode)
        lines = [
            f"{step.agent_id}: {_shorten(step.action.replace(chr(10), ' '), MINIMAL_CHARS)}"
            for step in traj.steps
        ]
        lines.append(f"reward={traj.reward:.3f}")
        return "\n".join(lines)
