"""Benchmarks over (env_id, instruction, category, difficulty) cases: run, then summarise."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from langmarl.core.errors import ConfigError

CASE_COLUMNS = ("env_id", "instruction", "category", "difficulty")


class BenchCase(BaseModel):
    """One benchmark row."""

    env_id: str
    instruction: str
    category: str = ""
    difficulty: str = ""


class CaseOutcome(BaseModel):
    """One case's result."""

    case: BenchCase
    session_id: str
    status: str
    best_score: float | None = None


def read_cases(path: str | Path) -> list[BenchCase]:
    """Read a CSV with header ``env_id,instruction,category,difficulty``.

    Raises:
        ConfigError: Missing file or columns, or an empty file.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"benchmark file {str(path)!r} does not exist")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CASE_COLUMNS[:2] if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(
                f"{path} lacks column(s) {missing}: the header must be {','.join(CASE_COLUMNS)}"
            )
        cases = [
            BenchCase(**{k: (row.get(k) or "").strip() for k in CASE_COLUMNS}) for row in reader
        ]
    if not cases:
        raise ConfigError(f"{path} has no cases: add rows under the header")
    return cases


def summarize(outcomes: list[CaseOutcome]) -> dict[str, dict[str, Any]]:
    """Per group (``all``, ``category=<c>``, ``difficulty=<d>``): cases, success rate, mean score.

    Success is status ``passed``; a case without a score counts as 0 in the mean score.
    """
    groups: dict[str, list[CaseOutcome]] = defaultdict(list)
    for outcome in outcomes:
        groups["all"].append(outcome)
        if outcome.case.category:
            groups[f"category={outcome.case.category}"].append(outcome)
        if outcome.case.difficulty:
            groups[f"difficulty={outcome.case.difficulty}"].append(outcome)
    return {
        name: {
            "cases": len(items),
            "success_rate": sum(o.status == "passed" for o in items) / len(items),
            "mean_score": sum(o.best_score or 0.0 for o in items) / len(items),
        }
        for name, items in groups.items()
    }
