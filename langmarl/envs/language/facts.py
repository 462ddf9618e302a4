"""Verifier facts: what a task's verifier established about the team's final answer, as
short sentences for the critic (grounded feedback, see :mod:`langmarl.textgrad.grounding`).

Decisions:

- Facts come from programs only: normalized match and F1 (qa), math-verify (math), the
  sandboxed tests (coding). Writing is scored by an LLM judge, so it has no facts, and the
  verdict of qa's optional LLM judge (``use_verified_reward``) is not presented as one.
- The expected answer is shown to the critic (never to the actors); the critic's prompt
  asks it not to quote it back, so gradients stay general.
- Long values are cut (:data:`MAX_FACT_CHARS`) so the critic's prompt fits small models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langmarl.envs.language.datasets import strip_code_fences
from langmarl.envs.language.rewards import has_answer_line

FACTS_KEY = "verifier_facts"
"""Trajectory metadata key of the facts (a list of sentences). Any environment with a
verifier may fill it and set ``has_verifier``; the critic reads it
(:mod:`langmarl.textgrad.grounding`)."""
Details = dict[str, Any]
FactsFn = Callable[[dict[str, Any], str, Details], list[str]]
MAX_FACT_CHARS = 300


def _short(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= MAX_FACT_CHARS else text[:MAX_FACT_CHARS] + " …"


def _answer_format(output: str) -> list[str]:
    if has_answer_line(output):
        return []
    return [
        "Format violation: the final reply has no 'Answer: ...' line, so its last line "
        "was taken as the answer."
    ]


def qa_facts(task: dict[str, Any], output: str, details: Details) -> list[str]:
    """Expected vs got, exact match and F1, and a missing ``Answer:`` line."""
    expected, got = _short(task.get("ground_truth", "")), _short(details.get("prediction", ""))
    exact = "yes" if details.get("exact_match") else "no"
    return [
        f"Expected answer: {expected!r}; the team's final answer: {got!r}.",
        f"Exact match: {exact}; token F1: {float(details.get('f1', 0.0)):.2f}.",
        *_answer_format(output),
    ]


def math_facts(task: dict[str, Any], output: str, details: Details) -> list[str]:
    """Expected vs got as checked by math-verify, and a missing ``Answer:`` line."""
    expected, got = _short(task.get("ground_truth", "")), _short(details.get("prediction", ""))
    verdict = "correct" if details.get("correct") else "wrong"
    return [
        f"Expected answer: {expected!r}; the team's final answer: {got!r}: {verdict} "
        "(checked by math-verify).",
        *_answer_format(output),
    ]


def coding_facts(task: dict[str, Any], output: str, details: Details) -> list[str]:
    """Tests passed or how they failed, a missing code block, a missing function."""
    facts = []
    if "```" not in output:
        facts.append("Format violation: the final reply has no ```python code block.")
    entry = task.get("entry_point")
    if entry and f"def {entry}" not in strip_code_fences(output):
        facts.append(
            f"The final code does not define {entry}(); it was run as the body of the "
            "task's function."
        )
    if details.get("passed"):
        facts.append("The hidden tests passed.")
    else:
        facts.append(f"The hidden tests failed: {_short(details.get('error', 'failed'))}")
    return facts


FACTS: dict[str, FactsFn] = {"qa": qa_facts, "math": math_facts, "coding": coding_facts}
"""Task type → its facts function; task types not listed have no verifier."""
VERIFIED_TASK_TYPES = frozenset(FACTS)


def verifier_facts(
    task_type: str, task: dict[str, Any], output: str, details: Details
) -> list[str]:
    """The verifier's facts about ``output`` (the final reply) on ``task`` (``[]`` for a
    task type without a verifier)."""
    make = FACTS.get(task_type)
    return make(task, output, details) if make is not None else []
