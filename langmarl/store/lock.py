"""`RunLock`: one process at a time per run directory.

An exclusive ``flock`` on ``<run dir>/.lock``, held for as long as the process trains the
run. The kernel drops it when the process ends in any way (SIGKILL included), so a lock
never outlives its holder; the file keeps the holder's pid only to name it in the error a
second process gets.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from langmarl.core.errors import RunLockedError
from langmarl.core.files import storage_errors

LOCK_FILE = ".lock"


class RunLock:
    """The lock of the run in ``run_dir``; :meth:`acquire` takes it or raises.

    Args:
        run_dir: The run's directory (created if missing).
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock (a no-op when already held by this object).

        Raises:
            RunLockedError: if another process holds it; the message names its pid.
            StorageError: if the lock file cannot be created (read-only, disk full).
        """
        if self._fd is not None:
            return self
        with storage_errors(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip() or "?"
            os.close(fd)
            raise RunLockedError(
                f"run {self.path.parent} is in use by process {holder}: wait for it to end, "
                f"or stop it (kill {holder}) and run this again to resume"
            ) from None
        with contextlib.suppress(OSError):  # a full disk: held all the same, pid unnamed
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Drop the lock (a no-op when not held)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):  # a read-only disk keeps the stale pid: harmless
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor drops the flock

    def holder(self) -> int | None:
        """The pid of the live process holding the lock, ``None`` if nobody does."""
        if self._fd is not None:
            return os.getpid()
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip()
            return int(text) if text.isdigit() else -1
        finally:
            os.close(fd)
        return None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
