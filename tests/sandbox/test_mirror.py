"""Mirroring a directory the sandbox writes back to the real disk: safely, within a budget."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from langmarl.sandbox._mirror import BudgetExceeded, Mirror


def _mirror(src: Path, dst: Path, budget: int | None = None) -> Mirror:
    return Mirror(os.open(src, os.O_RDONLY), os.open(dst, os.O_RDONLY), budget)


def test_copies_files_and_dirs_but_no_links_fifos_or_link_targets(tmp_path: Path) -> None:
    src, dst, secret = tmp_path / "src", tmp_path / "dst", tmp_path / "secret"
    for path in (src / "a" / "b", dst, secret):
        path.mkdir(parents=True)
    (secret / "key").write_text("do not copy")
    (src / "a" / "b" / "f.txt").write_text("data")
    (src / "link_file").symlink_to(secret / "key")
    (src / "link_dir").symlink_to(secret)
    os.mkfifo(src / "fifo")
    _mirror(src, dst).sync(full=True)
    assert (dst / "a" / "b" / "f.txt").read_text() == "data"
    assert sorted(p.name for p in dst.iterdir()) == ["a"]


def test_does_not_write_through_a_link_in_the_destination(tmp_path: Path) -> None:
    src, dst, victim = tmp_path / "src", tmp_path / "dst", tmp_path / "victim"
    for path in (src / "sub", dst, victim):
        path.mkdir(parents=True)
    (src / "sub" / "f").write_text("attacker")
    (dst / "sub").symlink_to(victim)
    _mirror(src, dst).sync(full=True)
    assert list(victim.iterdir()) == []


def test_the_budget_counts_every_byte_written_and_stops_the_mirror(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    mirror = _mirror(src, dst, budget=1000)
    (src / "a").write_bytes(b"x" * 600)
    mirror.sync()
    (src / "a").unlink()  # deleting gives nothing back
    (src / "b").write_bytes(b"y" * 600)
    with pytest.raises(BudgetExceeded):
        mirror.sync()
    assert mirror.written == 600 and not (dst / "b").exists()
    sparse = src / "sparse"
    with open(sparse, "wb") as handle:
        handle.truncate(10**9)  # no blocks in the source, a gigabyte in the destination
    with pytest.raises(BudgetExceeded):
        _mirror(src, tmp_path / "dst", budget=10**6).sync()


def test_appends_only_new_bytes_then_rewrites_whole_at_the_end(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    log = src / "scalars.jsonl"
    log.write_text("1\n")
    mirror = _mirror(src, dst)
    mirror.sync()
    with open(log, "a") as handle:
        handle.write("2\n")
    mirror.sync()
    assert (dst / "scalars.jsonl").read_text() == "1\n2\n" and mirror.written == 4
    log.write_text("rewritten in place\n")  # same inode, grew
    mirror.sync(full=True)
    assert (dst / "scalars.jsonl").read_text() == "rewritten in place\n"
    log.unlink()
    mirror.sync()
    assert not (dst / "scalars.jsonl").exists()


def test_files_present_at_the_baseline_are_not_copied_back(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    (src / "executor.log").write_text("stale copy")
    (dst / "executor.log").write_text("the parent's live log")
    mirror = _mirror(src, dst)
    mirror.baseline()
    (src / "new.json").write_text("{}")
    mirror.sync(full=True)
    assert (dst / "executor.log").read_text() == "the parent's live log"
    assert (dst / "new.json").read_text() == "{}"
