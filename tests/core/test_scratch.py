"""Scratch directories carry their owner in their name; the next one made with the same
prefix removes those whose owner is gone (a SIGKILLed process cannot clean up)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from langmarl.core.processes import process_start
from langmarl.core.scratch import scratch, scratch_dir, sweep


@pytest.fixture
def prefix() -> str:
    return f"langmarl-test-scratch-{uuid.uuid4().hex[:8]}-"


def _gone_owner() -> tuple[int, str]:
    """The pid and start time of a process that has ended."""
    child = subprocess.Popen(["sleep", "60"])
    started = process_start(child.pid)
    child.kill()
    child.wait()
    assert started is not None
    return child.pid, started


def test_a_gone_owners_directory_is_removed_and_a_live_ones_kept(prefix: str) -> None:
    root = Path(tempfile.gettempdir())
    pid, started = _gone_owner()
    orphan = root / f"{prefix}{pid}.{started}-abcd"
    (orphan / "tmp").mkdir(parents=True)
    recycled = root / f"{prefix}{os.getpid()}.1-abcd"  # this pid, another start: gone too
    recycled.mkdir()
    mine = scratch_dir(prefix)
    try:
        assert not orphan.exists() and not recycled.exists()
        assert mine.is_dir() and mine.name.startswith(f"{prefix}{os.getpid()}.")
        assert sweep(prefix) == [] and mine.is_dir()  # its owner runs: kept
        assert oct(mine.stat().st_mode & 0o777) == "0o700"
    finally:
        mine.rmdir()


def test_what_is_not_an_owned_directory_is_left_alone(prefix: str, tmp_path: Path) -> None:
    root = Path(tempfile.gettempdir())
    pid, started = _gone_owner()
    unnamed = root / f"{prefix}no-owner"
    link = root / f"{prefix}{pid}.{started}-link"
    file = root / f"{prefix}{pid}.{started}-file"
    other = root / f"x{prefix}{pid}.{started}-abcd"
    unnamed.mkdir()
    link.symlink_to(tmp_path, target_is_directory=True)
    file.write_text("")
    other.mkdir()
    try:
        assert sweep(prefix) == []
        assert unnamed.is_dir() and link.is_symlink() and file.is_file() and other.is_dir()
        assert tmp_path.is_dir()  # a link's target is never touched
    finally:
        for path in (unnamed, other):
            path.rmdir()
        link.unlink()
        file.unlink()


def test_a_scratch_block_removes_its_directory(prefix: str) -> None:
    with scratch(prefix) as path:
        (path / "f").write_text("x")
    assert not path.exists()
