"""Tiny local copies of the benchmarks, written in each one's own row format.

Tests never read outside the repository: a user's clone has no data directory beside it, so
these files stand in for GSM8K ``test.jsonl``, HumanEval ``HumanEval.jsonl`` and the HotpotQA
dev distractor file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROWS = 24  # more than the test's data_limit, so the limit is what cuts


def _gsm8k(i: int) -> dict[str, object]:
    return {
        "question": f"Ann has {i} apples and buys 2 more. How many now?",
        "answer": f"She has {i} + 2 = <<{i}+2={i + 2}>>{i + 2} apples.\n#### {i + 2}",
    }


def _humaneval(i: int) -> dict[str, object]:
    name = f"add_{i}"
    return {
        "task_id": f"HumanEval/{i}",
        "entry_point": name,
        "prompt": f'def {name}(x: int) -> int:\n    """Return x + {i}."""\n',
        "canonical_solution": f"    return x + {i}\n",
        "test": f"def check(candidate):\n    assert candidate(1) == {i + 1}\n",
    }


def _hotpotqa(i: int) -> dict[str, object]:
    return {
        "id": f"q{i}",
        "question": f"Which town hosts fair number {i}?",
        "answer": f"Town{i}",
        "type": "bridge",
        "level": "easy",
        "supporting_facts": [[f"Fair {i}", 0]],
        "context": [
            [f"Fair {i}", [f"Fair number {i} is held in Town{i}."]],
            ["Other", ["An unrelated sentence."]],
        ],
    }


FILES = {
    "gsm8k": ("test.jsonl", _gsm8k),
    "humaneval": ("HumanEval.jsonl", _humaneval),
    "hotpotqa": ("dev_distractor_500.jsonl", _hotpotqa),
}


@pytest.fixture
def benchmark_copies(tmp_path: Path) -> Path:
    """A directory of local copies, one per benchmark, in the files' own formats."""
    for folder, (name, row) in FILES.items():
        (tmp_path / folder).mkdir()
        lines = [json.dumps(row(i)) for i in range(ROWS)]
        (tmp_path / folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path
