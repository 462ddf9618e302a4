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

Where tasks come from (``benchmark_path``, :func:`load_tasks`): ``None`` is the small set
shipped inside langmarl; a path is a JSONL file or a directory of them; ``hf:<dataset id>``
(``hf:openai/gsm8k``, optionally ``@<split>``) loads a Hugging Face Hub dataset through
``datasets``, which caches it, so after one online run it loads offline too. When the hub is
unreachable and the cache empty, the error names the dataset, the ``--set
benchmark_path=`` option and the file format to give instead (:data:`HUB_DATASETS`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
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
    context = row.get("context") or []
    if isinstance(context, dict):  # the Hub's columns: {"title": [...], "sentences": [[...]]}
        context = zip(context.get("title", []), context.get("sentences", []), strict=False)
    paragraphs = [f"{title}: {''.join(sentences)}" for title, sentences in context]
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


def convert_rows(rows: Iterable[tuple[int, Any]], task_type: str) -> list[Task]:
    """Tasks of ``task_type`` among ``(index, row)`` pairs (other rows are skipped)."""
    tasks = []
    for index, row in rows:
        task = convert_row(row, index) if isinstance(row, dict) else None
        if task is not None and task.get("task_type") == task_type:
            tasks.append(task)
    return tasks


def read_task_file(path: Path, task_type: str) -> list[Task]:
    """Tasks of ``task_type`` in one JSONL file (rows of other types are skipped).

    Raises:
        ConfigError: naming the file (and line) when it is not UTF-8 or a row is not JSON.
    """
    from langmarl.core.files import read_input_jsonl

    rows = read_input_jsonl(path, "Task file")
    return convert_rows(((number - 1, row) for number, row in rows), task_type)


HUB_PREFIX = "hf:"
"""``benchmark_path`` values starting with this name a Hugging Face Hub dataset."""


@dataclass(frozen=True)
class HubDataset:
    """How to load one benchmark from the Hugging Face Hub, and what to give instead."""

    name: str | None
    """The dataset's configuration (``datasets.load_dataset``'s ``name``)."""
    split: str
    """The split loaded when ``benchmark_path`` names none."""
    file_format: str
    """One JSONL row of a local copy, for the error that asks for one."""


HUB_DATASETS: dict[str, HubDataset] = {
    "openai/gsm8k": HubDataset(
        "main", "test", '{"question": ..., "answer": "... #### 42"} (GSM8K test.jsonl)'
    ),
    "HuggingFaceH4/MATH-500": HubDataset(
        None, "test", '{"problem": ..., "solution": ..., "answer": ...} (MATH-500 test.jsonl)'
    ),
    "openai/openai_humaneval": HubDataset(
        None, "test", '{"task_id": ..., "prompt": ..., "entry_point": ..., "test": ...} '
        "(HumanEval.jsonl)"
    ),
    "hotpotqa/hotpot_qa": HubDataset(
        "distractor", "validation", '{"id": ..., "question": ..., "answer": ..., "context": '
        "[[title, [sentence, ...]], ...]} (HotpotQA dev, distractor setting)"
    ),
    "google-research-datasets/mbpp": HubDataset(
        "sanitized", "test", '{"task_id": ..., "prompt": ..., "test_list": [...], '
        '"test_imports": [...]} (MBPP sanitized)'
    ),
}  # fmt: skip
"""Benchmarks the presets name, with their configuration, split and local file format.
Other ids load their ``test`` split and are recognized by their columns (:data:`FORMATS`)."""

ANY_FORMAT = (
    "GSM8K, MATH, HumanEval, MBPP, HotpotQA, creative-writing or langmarl's own "
    '{"task_type": ..., "question": ...} rows'
)


def load_hub_tasks(spec: str, task_type: str) -> list[Task]:
    """Tasks of ``task_type`` from ``hf:<dataset id>[@<split>]`` (the ``datasets`` cache is
    used when present, and offline).

    Raises:
        ConfigError: when ``datasets`` is missing, or the dataset is neither reachable nor
            cached: naming the dataset, the ``--set benchmark_path=`` option and the format.
    """
    dataset_id, _, split = spec.removeprefix(HUB_PREFIX).partition("@")
    known = HUB_DATASETS.get(dataset_id)
    split = split or (known.split if known else "test")
    try:
        import datasets
    except ImportError:
        raise _unavailable(dataset_id, known, "the `datasets` package is not installed: "
                           "pip install datasets") from None  # fmt: skip
    try:
        rows = datasets.load_dataset(dataset_id, known.name if known else None, split=split)
    except (OSError, ValueError) as exc:  # ConnectionError, DatasetNotFoundError, bad split
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise _unavailable(dataset_id, known, reason) from None
    tasks = convert_rows(enumerate(rows), task_type)
    if not tasks:
        raise ConfigError(
            f"No {task_type} tasks in Hugging Face dataset {dataset_id!r} (split {split!r}): "
            f"its rows are not one of {ANY_FORMAT}, or hold another task_type."
        )
    return tasks


def _unavailable(dataset_id: str, known: HubDataset | None, reason: str) -> ConfigError:
    fmt = known.file_format if known else ANY_FORMAT
    return ConfigError(
        f"Benchmark {dataset_id!r} could not be loaded from the Hugging Face Hub ({reason}) "
        "and is not in the local datasets cache. Either run once with internet access (it is "
        "cached for later, offline runs), or download it yourself from "
        f"https://huggingface.co/datasets/{dataset_id} and pass the file: "
        f"--set benchmark_path=PATH (a JSONL file or a directory of them, one task per line: "
        f"{fmt}). Or drop benchmark_path to use the small task set shipped with langmarl."
    )


def shipped_tasks(task_type: str) -> list[Task]:
    """The small demo set for ``task_type`` shipped inside langmarl."""
    resource = resources.files("langmarl.envs.language").joinpath(f"tasks/{task_type}.jsonl")
    with resources.as_file(resource) as path:
        return read_task_file(Path(path), task_type)


def load_tasks(task_type: str, benchmark_path: str | None, data_limit: int | None) -> list[Task]:
    """Tasks for ``task_type`` from ``benchmark_path`` (a JSONL file, a directory whose
    ``*.jsonl`` files are all read, or ``hf:<dataset id>``), or the shipped set when it is
    ``None``.

    Raises:
        ConfigError: for an unknown task type, a missing path, an unavailable Hub dataset
            (:func:`load_hub_tasks`), or no task of that type.
    """
    if task_type not in TASK_TYPES:
        raise ConfigError(f"task_type must be one of {TASK_TYPES}, got {task_type!r}.")
    if benchmark_path is None:
        tasks = shipped_tasks(task_type)
    elif benchmark_path.startswith(HUB_PREFIX):
        tasks = load_hub_tasks(benchmark_path, task_type)
    else:
        path = Path(benchmark_path).expanduser()
        if not path.exists():
            raise ConfigError(
                f"benchmark_path {benchmark_path!r} does not exist; give a JSONL file or a "
                f"directory of them, a Hugging Face dataset as {HUB_PREFIX}<id> (e.g. "
                f"{HUB_PREFIX}openai/gsm8k), or leave it null for the shipped task set."
            )
        files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
        tasks = [task for file in files for task in read_task_file(file, task_type)]
        if not tasks:
            raise ConfigError(
                f"No {task_type} tasks found in {benchmark_path!r} (looked at {len(files)} "
                f"JSONL files; supported: {ANY_FORMAT})."
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
