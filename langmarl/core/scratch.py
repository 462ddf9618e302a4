"""Scratch directories in the system's temp directory that a killed process does not leave
behind.

A process killed with SIGKILL cannot remove its scratch directory (a confined training's
home, a sandbox's files). :func:`scratch_dir` names each one after its owner, its pid and
start time (``<prefix><pid>.<start>-<random>``), and before making one removes this user's
directories of the same prefix whose owner is gone. A recycled pid is never taken for the
owner: its start time differs.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from langmarl.core.processes import process_alive, process_start

_OWNER = re.compile(r"(\d+)\.(\d+)-")


def scratch_dir(prefix: str) -> Path:
    """A new directory ``<tmp>/<prefix><pid>.<start>-<random>`` (mode 700), after removing
    this user's ``<prefix>…`` directories whose owning process is gone."""
    sweep(prefix)
    start = process_start(os.getpid())
    if start is None:  # no /proc: no owner to name, so no sweep will take it for gone
        return Path(tempfile.mkdtemp(prefix=prefix))
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}.{start}-"))


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """:func:`scratch_dir`, removed when the block ends (as ``TemporaryDirectory``)."""
    path = scratch_dir(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def sweep(prefix: str) -> list[Path]:
    """Remove this user's ``<tmp>/<prefix><pid>.<start>-…`` directories whose owner is no
    longer running; returns them. Anything else under the prefix (another user's, a link,
    a name without an owner) is left alone."""
    removed = []
    root = Path(tempfile.gettempdir())
    for path in root.glob(f"{glob.escape(prefix)}*"):
        owner = _OWNER.match(path.name[len(prefix) :])
        if owner is None or process_alive(int(owner[1]), owner[2]):
            continue
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
