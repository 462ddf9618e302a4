"""Crash-safe writes: atomic replace, JSONL appends that survive a torn line."""

import errno
import json
import os
from pathlib import Path

import pytest

from langmarl.core.errors import RunFileError, StorageError
from langmarl.core.files import append_jsonl, atomic_write_json, load_json_file, read_jsonl


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
    with pytest.raises(RunFileError, match=r"events\.jsonl: line 2 is not JSON"):
        read_jsonl(path)


@pytest.mark.parametrize(
    ("code", "says"),
    [(errno.ENOSPC, "no space left"), (errno.EROFS, "read-only"), (errno.EACCES, "permission")],
)
def test_a_refused_write_names_the_file_and_keeps_the_old_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, says: str
) -> None:
    path = tmp_path / "run.json"
    atomic_write_json(path, {"status": "running"})

    def refuse(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", refuse)
    with pytest.raises(StorageError, match=says) as caught:
        atomic_write_json(path, {"status": "completed"})
    assert str(path) in str(caught.value)
    with pytest.raises(StorageError, match=r"events\.jsonl"):
        append_jsonl(tmp_path / "events.jsonl", {"a": 1})
    assert json.loads(path.read_text()) == {"status": "running"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.jsonl", "run.json"]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"a": 1, "b"', "not valid JSON .* line 1, column"),
        (b"", "empty"),
        (b"\xff\xfe{}", "UTF-8"),
    ],
)
def test_an_unreadable_json_file_is_named_with_the_place(
    tmp_path: Path, content: bytes, says: str
) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(content)
    with pytest.raises(RunFileError, match=says) as caught:
        load_json_file(path, "Delete it.")
    assert str(caught.value).startswith(str(path))
    assert str(caught.value).endswith("Delete it.")
