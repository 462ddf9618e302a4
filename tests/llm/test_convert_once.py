"""The embedded model's cached copies are made once, however many processes start at once
(a fresh machine's test run had its three workers each convert the GGUF file, ~20 CPU-s each)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from langmarl.llm.local.weights import convert_once


def test_concurrent_first_uses_convert_once_and_all_get_the_copy(tmp_path: Path) -> None:
    target, calls = tmp_path / "models" / "copy", []

    def convert(into: Path) -> None:
        calls.append(into)
        time.sleep(0.3)  # the others arrive while this one converts
        into.mkdir()
        (into / "weights").write_text("w")

    def complete() -> bool:
        return (target / "weights").is_file()

    # separate open() calls: flock excludes them as it does separate processes
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(convert_once(target, complete, convert)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(calls) == 1 and results == [target] * 3
    assert (target / "weights").read_text() == "w"
    leftovers = [p.name for p in target.parent.iterdir() if p.name not in ("copy", ".copy.lock")]
    assert leftovers == []  # the staging directory is gone


def test_an_incomplete_copy_from_a_crash_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "copy"
    target.mkdir()
    (target / "half").write_text("")

    def convert(into: Path) -> None:
        into.mkdir()
        (into / "weights").write_text("w")

    convert_once(target, lambda: (target / "weights").is_file(), convert)
    assert sorted(p.name for p in target.iterdir()) == ["weights"]


def test_a_failed_conversion_leaves_nothing_and_the_next_one_converts(tmp_path: Path) -> None:
    target = tmp_path / "copy"

    def fails(into: Path) -> None:
        into.mkdir()
        (into / "partial").write_text("")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        convert_once(target, lambda: (target / "weights").is_file(), fails)
    assert not target.exists() and [p.name for p in tmp_path.iterdir()] == [".copy.lock"]

    def converts(into: Path) -> None:
        into.mkdir()
        (into / "weights").write_text("w")

    assert convert_once(target, lambda: (target / "weights").is_file(), converts) == target
    assert (target / "weights").is_file()
