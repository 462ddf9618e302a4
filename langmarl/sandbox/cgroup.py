"""A throwaway pids cgroup per sandboxed run, when the process may create one (root).

``RLIMIT_NPROC`` is not enforced for root, and processes that call ``setsid`` leave the
process group; a pids cgroup closes both gaps: ``pids.max`` caps the process count of the
run and every member is killed at the end, wherever it moved.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from pathlib import Path

logger = logging.getLogger(__name__)

_V1_ROOT = Path("/sys/fs/cgroup/pids")
_V2_ROOT = Path("/sys/fs/cgroup")


def _own_pids_path() -> str:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            return path
    return "/"


class PidsCgroup:
    """One cgroup with a ``pids.max``; ``create`` returns ``None`` where that is impossible."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def procs_file(self) -> str:
        """The file a process writes its pid to in order to join."""
        return str(self.path / "cgroup.procs")

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        """Make a fresh cgroup capped at ``max_pids`` processes, or return ``None``."""
        if os.geteuid() != 0:
            return None
        for root in (_V1_ROOT / _own_pids_path().lstrip("/"), _V2_ROOT):
            path = root / f"langmarl-sandbox-{uuid.uuid4().hex[:12]}"
            try:
                path.mkdir()
            except OSError:
                continue
            if not (path / "pids.max").exists():  # not a cgroup fs, or no pids controller
                _remove(path)
                continue
            try:
                (path / "pids.max").write_text(str(max_pids))
                return cls(path)
            except OSError:
                _remove(path)
        return None

    def pids(self) -> list[int]:
        """Members now."""
        try:
            return [int(p) for p in Path(self.procs_file).read_text().split()]
        except OSError:
            return []

    def kill_all_and_remove(self) -> None:
        """SIGKILL every member until none is left, then delete the cgroup."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            members = self.pids()
            if not members:
                break
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        _remove(self.path)


def _remove(path: Path) -> None:
    for _ in range(100):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)  # members that were just killed are still being reaped
    logger.warning("could not remove sandbox cgroup %s; remove it by hand", path)
