"""StaticDataset: sources, validation, sampling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.datasets import DataPoint, StaticDataset

ITEMS = [
    {"question": "1+1?", "final_answer": "2"},
    {"question": "2+2?", "final_answer": "4", "rationale": "add", "metadata": {"level": 1}},
]


def test_from_list_of_dicts_and_datapoints() -> None:
    dataset = StaticDataset([*ITEMS, DataPoint(question="q", final_answer="a")])
    assert len(dataset) == 3
    assert dataset[1].rationale == "add" and dataset[-1].final_answer == "a"
    with pytest.raises(IndexError, match="out of range"):
        dataset[3]


def test_from_json_and_jsonl_files(tmp_path: Path) -> None:
    json_path = tmp_path / "d.json"
    json_path.write_text(json.dumps(ITEMS))
    jsonl_path = tmp_path / "d.jsonl"
    jsonl_path.write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    assert [p.question for p in StaticDataset(json_path).data] == ["1+1?", "2+2?"]
    assert len(StaticDataset(str(jsonl_path))) == 2


def test_bad_files_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        StaticDataset(tmp_path / "missing.json")
    csv = tmp_path / "d.csv"
    csv.write_text("a,b")
    with pytest.raises(ValueError, match=r"\.json or \.jsonl"):
        StaticDataset(csv)
    obj = tmp_path / "o.json"
    obj.write_text("{}")
    with pytest.raises(ValueError, match="JSON list"):
        StaticDataset(obj)


def test_invalid_items_are_skipped_or_raise_when_strict() -> None:
    data = [*ITEMS, {"question": "no answer"}, "not a dict"]
    assert len(StaticDataset(data)) == 2
    with pytest.raises(ValueError, match="item 2"):
        StaticDataset(data, strict=True)
    with pytest.raises(ValueError, match="min_samples"):
        StaticDataset(data, min_samples=3)


def test_indexable_datasets_are_accepted() -> None:
    """Anything with len() and indexing (Hugging Face and torch datasets) works."""

    class Indexable:
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int) -> dict[str, str]:
            return ITEMS[i]

    assert len(StaticDataset(Indexable())) == 2
    with pytest.raises(TypeError, match="got int"):
        StaticDataset(5)


def test_a_real_hugging_face_dataset_loads(tmp_path: Path) -> None:
    import datasets

    hf = datasets.Dataset.from_list([{**item, "extra": k} for k, item in enumerate(ITEMS)])
    loaded = StaticDataset(hf)
    assert len(loaded) == len(ITEMS)
    assert [p.question for p in loaded.data] == [item["question"] for item in ITEMS]
    hf.to_json(tmp_path / "saved.jsonl")  # the HF JSONL export reads back the same
    assert [p.final_answer for p in StaticDataset(tmp_path / "saved.jsonl").data] == [
        item["final_answer"] for item in ITEMS
    ]


def test_sample_is_seeded() -> None:
    a = StaticDataset(ITEMS * 5, seed=3)
    b = StaticDataset(ITEMS * 5, seed=3)
    assert [a.sample() for _ in range(6)] == [b.sample() for _ in range(6)]
    assert a.metadata["seed"] == 3


def test_slicing_returns_a_list_as_camel() -> None:
    """CAMEL's StaticDataset.__getitem__ takes an int or a slice; a slice returns a list of
    DataPoint (``dataset[1:3]``), even an empty or out-of-range one; other types are a
    TypeError."""
    dataset = StaticDataset([{"question": f"q{i}", "final_answer": str(i)} for i in range(5)])
    assert [p.final_answer for p in dataset[1:3]] == ["1", "2"]
    assert [p.final_answer for p in dataset[::2]] == ["0", "2", "4"]
    assert dataset[4:10] == [dataset[4]] and dataset[7:9] == []
    with pytest.raises(TypeError, match="int or slice"):
        dataset["1"]  # type: ignore[call-overload]
