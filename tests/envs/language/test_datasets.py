"""Loaders for the standard formats, the shipped sets, splits and sampling."""

import json
import random
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.envs.language.datasets import (
    TASK_TYPES,
    convert_row,
    load_tasks,
    sample,
    shipped_tasks,
    split_tasks,
)


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_shipped_sets_exist_and_have_what_rewards_need(task_type: str) -> None:
    tasks = shipped_tasks(task_type)
    assert len(tasks) >= 5
    needed = {"qa": "ground_truth", "math": "ground_truth", "coding": "test", "writing": "criteria"}
    assert all(t["task_type"] == task_type and t[needed[task_type]] for t in tasks)


def test_rows_of_each_standard_format() -> None:
    gsm = convert_row({"question": "q", "answer": "work\n#### 1,234"}, 0)
    assert gsm and gsm["ground_truth"] == "1234" and gsm["task_type"] == "math"
    math = convert_row({"problem": "p", "solution": "so \\boxed{\\frac{1}{2}}"}, 3)
    assert math and math["ground_truth"] == "\\frac{1}{2}"
    he = convert_row({"task_id": "H/1", "prompt": "def f():\n", "entry_point": "f", "test": "t"}, 0)
    assert he and he["task_type"] == "coding" and he["id"] == "H/1"
    hotpot = convert_row({"question": "q", "answer": "a", "context": [["T", ["s1.", " s2."]]]}, 0)
    assert hotpot and hotpot["context"] == "T: s1. s2." and hotpot["task_type"] == "qa"
    writing = convert_row({"seed_sentence": "A. B.", "criteria": "c"}, 0)
    assert writing and writing["task_type"] == "writing" and "A. B." in writing["question"]
    assert convert_row({"unrelated": 1}, 0) is None


@pytest.mark.parametrize(
    ("task_type", "first_id"),
    [("qa", "q0"), ("math", "gsm8k/0"), ("coding", "HumanEval/0")],
)
def test_a_directory_of_benchmark_files(
    task_type: str, first_id: str, benchmark_copies: Path
) -> None:
    tasks = load_tasks(task_type, str(benchmark_copies), data_limit=4)
    assert len(tasks) == 4 and tasks[0]["id"] == first_id


def test_bad_paths_and_rows_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_tasks("qa", str(tmp_path / "nope"), None)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "a"}\nnot json\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl', line 2: not JSON"):
        load_tasks("math", str(bad), None)
    only_math = tmp_path / "m.jsonl"
    only_math.write_text(json.dumps({"problem": "p", "answer": "1"}) + "\n")
    with pytest.raises(ConfigError, match="No qa tasks"):
        load_tasks("qa", str(only_math), None)


def test_split_is_seeded_disjoint_and_non_empty() -> None:
    tasks = [{"id": i} for i in range(10)]
    a, b = split_tasks(tasks, 0.2, seed=3), split_tasks(tasks, 0.2, seed=3)
    assert a == b and len(a["test"]) == 2 and len(a["train"]) == 8
    assert not {t["id"] for t in a["train"]} & {t["id"] for t in a["test"]}
    tiny = split_tasks(tasks[:2], 0.2, seed=0)
    assert len(tiny["train"]) == 1 and len(tiny["test"]) == 1


def test_sampling_is_seeded_and_cycles_when_short() -> None:
    tasks = [{"id": i} for i in range(3)]
    assert sample(tasks, 2, random.Random(1)) == sample(tasks, 2, random.Random(1))
    many = sample(tasks, 7, random.Random(0))
    assert len(many) == 7 and {t["id"] for t in many[:3]} == {0, 1, 2}
