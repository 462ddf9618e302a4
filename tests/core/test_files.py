"""Crash-safe writes: atomic replace, JSONL appends that survive a torn line."""

import json
from pathlib import Path

import pytest

from langmarl.core.files import append_jsonl, atomic_write_json, read_jsonl


def test_atomic_write_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b.json"
    atomic_write_json(path, {"x": 1})
    atomic_write_json(path, {"x": 2})
    assert json.loads(path.read_text()) == {"x": 2}
    assert [p.name for p in path.parent.iterdir()] == ["b.json"]


@pytest.mark.parametrize("torn", ['{"step": 2, "val', "{", '{"a": "' + "x" * 10_000])
def test_a_torn_last_line_is_skipped_then_cut_by_the_next_append(tmp_path: Path, torn: str) -> None:
    path = tmp_path / "events.jsonl"
    append_jsonl(path, {"step": 1})
    with open(path, "a", encoding="utf-8") as handle:  # a crash mid-write
        handle.write(torn)
    assert read_jsonl(path) == [{"step": 1}]
    append_jsonl(path, {"step": 3})
    assert read_jsonl(path) == [{"step": 1}, {"step": 3}]
    assert path.read_text().count("\n") == 2


def test_a_file_holding_only_a_torn_line_is_emptied_first(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"never finished"')
    append_jsonl(path, {"ok": True})
    assert path.read_text() == '{"ok": true}\n'


def test_a_bad_line_in_the_middle_is_an_error_not_silently_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"b": 2}\n')
    with pytest.raises(json.JSONDecodeError):
        read_jsonl(path)
