"""Parsing the orchestrator's plan, with a documented fallback for weak models.

Format: one line per sub-task, ``SUBTASK: <question>`` (also accepted: ``SUBTASK 2: …``,
``Sub-task 2) …``, ``- Task: …``). When no such line is found, numbered lines (``1. …``,
``2) …``, ``(a) …``) of the plan are taken. When the plan has neither, the **fallback** spawns
one sub-agent per sub-question detected in the task itself (its numbered lines), or one
sub-agent for the whole task if it has none. ``Plan.status`` records which rule applied.

The fallback is a choice (``fallback``): ``"parts"`` (the default) rescues a weak
orchestrator with the task's own split, which suits language-space training and evaluation;
``"single"`` skips that rule, so a plan without sub-task lines runs as one sub-agent on the
whole task (serial collapse). Training the plan's *format* in weight space needs
``"single"``: with ``"parts"`` an unparseable plan earns full parallelism for free.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

PlanStatus = Literal["plan", "plan_numbered", "fallback_parts", "fallback_single"]
PlanFallback = Literal["parts", "single"]

_SUBTASK_LINE = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:sub[\s_-]?task|task)\s*\d*\s*[:.)\-]\s*(?P<text>.+?)\s*$", re.I
)
_NUMBERED_LINE = re.compile(r"^\s*\(?(?:\d{1,2}|[a-hA-H])[.):]\s*(?P<text>.+?)\s*$")


class Plan(BaseModel):
    """A parsed plan.

    Attributes:
        subtasks: The sub-task questions, in plan order (all of them, before any cap).
        status: Which parsing rule produced them (see the module docstring).
    """

    subtasks: list[str]
    status: PlanStatus


def _matches(pattern: re.Pattern[str], text: str) -> list[str]:
    found = (pattern.match(line) for line in text.splitlines())
    return [m.group("text").strip() for m in found if m and m.group("text").strip()]


def task_parts(task_prompt: str) -> list[str]:
    """The sub-questions a task lists as numbered lines (``1. …``), in order."""
    return _matches(_NUMBERED_LINE, task_prompt)


def parse_plan(plan_text: str, task_prompt: str, fallback: PlanFallback = "parts") -> Plan:
    """Sub-tasks from ``plan_text``, falling back to the task's own parts (``fallback="parts"``)
    or straight to one sub-agent for the whole task (``fallback="single"``).

    Never raises: a plan that cannot be parsed takes the documented fallback, and
    ``Plan.status`` says so.
    """
    subtasks = _matches(_SUBTASK_LINE, plan_text)
    if subtasks:
        return Plan(subtasks=subtasks, status="plan")
    numbered = _matches(_NUMBERED_LINE, plan_text)
    if numbered:
        return Plan(subtasks=numbered, status="plan_numbered")
    parts = task_parts(task_prompt) if fallback == "parts" else []
    if parts:
        return Plan(subtasks=parts, status="fallback_parts")
    return Plan(subtasks=[task_prompt.strip()], status="fallback_single")
