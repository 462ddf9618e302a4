"""The pool of a pool-search run (``search: pool``) as the run page shows it, read from the
run's files: every candidate of ``pool.jsonl`` with its parents and per-task scores, the
Pareto front, the best candidate and the demonstrations in its policies.

The server may not import the trainer (the layer test), so this reads the files as plain
JSON. Decisions:

- The front and the best candidate are the trainer's own, from the newest metrics line
  (``front``, ``best_candidate``): this module never re-decides them. Before the first round
  ends there is no such line; the starting candidate is then the whole front and the best.
- Candidates appended after that line (a round that is being written) are listed; they are
  marked ``on_front`` only once the trainer's line names them.
- Demonstrations are split from the policy text by :class:`langmarl.core.demos.DemoPolicy`,
  the one parser of the policy format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmarl.core.demos import DemoPolicy
from langmarl.core.errors import LangmarlError
from langmarl.core.files import read_jsonl
from langmarl.store.run import METRICS_FILE
from langmarl.web.runfiles import read_json

POOL_FILE = "pool.jsonl"
"""The trainer's record of candidates (``langmarl.trainer.pool.records.POOL_FILE``)."""
VALIDATION_FILE = "validation.json"
"""The run's validation batch: which task each entry of ``task_scores`` is."""
SHOWN = (
    "id", "iteration", "origin", "parents", "changed", "note", "score", "task_scores",
    "agent_scores", "accepted", "reason",
)  # fmt: skip
"""Candidate fields the page shows (the policies are long: only the best's are sent)."""


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        return [row for row in read_jsonl(path) if isinstance(row, dict)]
    except LangmarlError:  # a corrupt line: the trainer's own reader names it
        return []


def _decision(run: Path, candidates: list[dict[str, Any]]) -> tuple[list[int], int | None]:
    """``(front ids, best id)`` of the newest metrics line that records them."""
    for row in reversed(_lines(run / METRICS_FILE)):
        if isinstance(row.get("front"), list):
            best = row.get("best_candidate")
            return [int(i) for i in row["front"]], best if isinstance(best, int) else None
    initial = [c["id"] for c in candidates if c.get("origin") == "initial" and c.get("accepted")]
    return initial, initial[0] if initial else None


def demonstrations(policies: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Per agent: its instruction and its demonstrations (input, output) in order."""
    shown = {}
    for agent_id, text in policies.items():
        parsed = DemoPolicy.parse(str(text))
        demos = [{"input": d.input, "output": d.output} for d in parsed.demos]
        shown[agent_id] = {"instruction": parsed.instruction, "demonstrations": demos}
    return shown


def read_pool(run: Path) -> dict[str, Any]:
    """The pool of the run in ``run`` (empty lists when it has none yet)."""
    candidates = [c for c in _lines(run / POOL_FILE) if isinstance(c.get("id"), int)]
    front, best = _decision(run, candidates)
    by_id = {c["id"]: c for c in candidates}
    shown = [
        {**{key: c.get(key) for key in SHOWN}, "on_front": c["id"] in front} for c in candidates
    ]
    batch = read_json(run / VALIDATION_FILE) or {}
    chosen = by_id.get(best) if best is not None else None
    return {
        "tasks": list(batch.get("task_ids") or []) if isinstance(batch, dict) else [],
        "candidates": shown,
        "front": front,
        "best": best,
        "demonstrations": demonstrations(chosen.get("policies") or {}) if chosen else {},
    }
