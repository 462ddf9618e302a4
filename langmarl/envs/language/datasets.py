"""Task sets of the language environment: loaders, the shipped demo sets, splits, sampling.

Every loader turns one JSONL row into a task dict with ``id``, ``task_type`` and
``question`` (what the agents are asked), plus what its reward needs:

- qa: ``ground_truth`` (and ``context`` for HotpotQA);
- math: ``ground_truth`` (GSM8K ``final_answer`` / text after ``####``; MATH ``answer`` or the
  last ``\\boxed{}`` of ``solution``);
- coding: ``entry_point`` and ``test`` (HumanEval: a ``check(candidate)`` function; MBPP:
  ``assert`` lines);
- writing: ``criteria`` (creative-writing seed sentences become the question).

Keys the agents and the critic must not see (``ground_truth``, ``test``) are hidden by the
prompt builders.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.extractors import fenced_blocks

Task = dict[str, Any]
TASK_TYPES = ("qa", "math", "coding", "writing")
CONTEXT_CHARS = 2500
"""HotpotQA paragraphs are joined up to this many characters."""


def _boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` in ``text`` (balanced braces)."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 0, start + len("\\boxed")
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j]
    return None


def _gsm8k(row: dict[str, Any], index: int) -> Task:
    answer = row.get("final_answer") or str(row["answer"]).split("####")[-1]
    return {
        "id": f"gsm8k/{index}",
        "task_type": "math",
        "question": row["question"],
        "ground_truth": str(answer).strip().replace(",", ""),
    }


def _math(row: dict[str, Any], index: int) -> Task:
    answer = row.get("answer") or _boxed(str(row.get("solution", ""))) or ""
    return {
        "id": str(row.get("unique_id", f"math/{index}")),
        "task_type": "math",
        "question": row["problem"],
        "ground_truth": str(answer),
    }


def _humaneval(row: dict[str, Any], index: int) -> Task:
    return {
        "id": str(row.get("task_id", f"humaneval/{index}")),
        "task_type": "coding",
        "question": row["prompt"],
        "entry_point": row["entry_point"],
        "test": row["test"],
    }


def _mbpp(row: dict[str, Any], index: int) -> Task:
    tests = list(row["test_list"])
    imports = "\n".join(row.get("test_imports") or [])
    return {
        "id": f"mbpp/{row.get('task_id', index)}",
        "task_type": "coding",
        "question": f"{row.get('text') or row.get('prompt')}\nIt must pass: {tests[0]}",
        "entry_point": "",
        "test": "\n".join([imports, *tests]).strip(),
    }


def _hotpotqa(row: dict[str, Any], index: int) -> Task:
    paragraphs = [f"{title}: {''.join(sentences)}" for title, sentences in row.get("context", [])]
    return {
        "id": str(row.get("id", f"hotpotqa/{index}")),
        "task_type": "qa",
        "question": row["question"],
        "context": "\n".join(paragraphs)[:CONTEXT_CHARS],
        "ground_truth": row["answer"],
    }


def _writing(row: dict[str, Any], index: int) -> Task:
    seeds = row["seed_sentence"]
    return {
        "id": str(row.get("task_id", f"writing/{index}")),
        "task_type": "writing",
        "question": (
            "Write a coherent passage of 4 short paragraphs. The paragraphs must end with "
            f"these sentences, in order: {seeds}"
        ),
        "criteria": row.get("criteria", "creativity, coherence, continuation quality"),
    }


def _native(row: dict[str, Any], index: int) -> Task:
    task = dict(row)
    task.setdefault("id", f"task/{index}")
    return task


# (keys that identify the format, loader). The first match wins.
FORMATS: list[tuple[frozenset[str], Callable[[dict[str, Any], int], Task]]] = [
    (frozenset({"task_type", "question"}), _native),
    (frozenset({"question", "answer", "final_answer"}), _gsm8k),
    (frozenset({"problem"}), _math),
    (frozenset({"prompt", "entry_point", "test"}), _humaneval),
    (frozenset({"test_list"}), _mbpp),
    (frozenset({"question", "answer", "context"}), _hotpotqa),
    (frozenset({"seed_sentence"}), _writing),
    (frozenset({"question", "answer"}), _gsm8k),
]


def convert_row(row: dict[str, Any], index: int) -> Task | None:
    """The task for one row, or ``None`` if its format is not recognized."""
    for keys, loader in FORMATS:
        if keys <= row.keys():
            return loader(row, index)
    return None


def read_task_file(path: Path, task_type: str) -> list[Task]:
    """Tasks of ``task_type`` in one JSONL file (rows of other types are skipped).

    Raises:
        ConfigError: naming the file (and line) when it is not UTF-8 or a row is not JSON.
    """
    from langmarl.core.files import read_input_jsonl

    tasks = []
    for number, row in read_input_jsonl(path, "Task file"):
        task = convert_row(row, number - 1) if isinstance(row, dict) else None
        if task is not None and task.get("task_type") == task_type:
            tasks.append(task)
    return tasks


def shipped_tasks(task_type: str) -> list[Task]:
    """The small demo set for ``task_type`` shipped inside langmarl."""
    resource = resources.files("langmarl.envs.language").joinpath(f"tasks/{task_type}.jsonl")
    with resources.as_file(resource) as path:
        return read_task_file(Path(path), task_type)


def load_tasks(task_type: str, benchmark_path: str | None, data_limit: int | None) -> list[Task]:
    """Tasks for ``task_type`` from ``benchmark_path`` (a JSONL file, or a directory whose
    ``*.jsonl`` files are all read), or the shipped set when it is ``None``.

    Raises:
        ConfigError: for an unknown task type, a missing path, or no task of that type.
    """
    if task_type not in TASK_TYPES:
        raise ConfigError(f"task_type must be one of {TASK_TYPES}, got {task_type!r}.")
    if benchmark_path is None:
        tasks = shipped_tasks(task_type)
    else:
        path = Path(benchmark_path).expanduser()
        if not path.exists():
            raise ConfigError(
                f"benchmark_path {benchmark_path!r} does not exist; give a JSONL file or a "
                "directory of them, or leave it null for the shipped task set."
            )
        files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
        tasks = [task for file in files for task in read_task_file(file, task_type)]
        if not tasks:
            raise ConfigError(
                f"No {task_type} tasks found in {benchmark_path!r} (looked at {len(files)} "
                "JSONL files; supported: GSM8K, MATH, HumanEval, MBPP, HotpotQA, "
                "creative-writing and langmarl's own task format)."
            )
    return tasks[:data_limit] if data_limit is not None else tasks


def split_tasks(tasks: list[Task], test_fraction: float, seed: int) -> dict[str, list[Task]]:
    """A seeded train/test split; with two or more tasks both splits are non-empty."""
    order = list(range(len(tasks)))
    random.Random(f"split:{seed}").shuffle(order)
    n_test = round(len(tasks) * test_fraction)
    if len(tasks) >= 2:
        n_test = min(max(n_test, 1), len(tasks) - 1)
    test_ids = set(order[:n_test])
    return {
        "train": [t for i, t in enumerate(tasks) if i not in test_ids] or list(tasks),
        "test": [t for i, t in enumerate(tasks) if i in test_ids] or list(tasks),
    }


def sample(tasks: list[Task], n: int, rng: random.Random) -> list[Task]:
    """``n`` tasks: without replacement when there are enough, else cycling through a
    shuffled copy."""
    if n <= len(tasks):
        return rng.sample(tasks, n)
    picked: list[Task] = []
    while len(picked) < n:
        picked += rng.sample(tasks, len(tasks))
    return picked[:n]


def strip_code_fences(text: str) -> str:
    """The content of the last fenced code block of ``text`` (``text`` if none)."""
    blocks = fenced_blocks(text)
    return blocks[-1][1] if blocks else text
