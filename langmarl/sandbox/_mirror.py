"""Copy a directory tree between the sandbox's tmpfs and the real disk (stdlib only).

The start-up code copies each persisted directory into the sandbox's tmpfs before the code
runs; the supervisor mirrors it back while the code runs and once more after it exits. The
source of the mirror is written by untrusted code, so:

* only regular files and directories are copied; symlinks, FIFOs, sockets and devices are
  skipped, and no path is followed through a symlink on either side (every file is opened
  relative to its directory's descriptor with ``O_NOFOLLOW``);
* the mirror writes at most ``budget`` bytes to the destination over its whole life
  (rewrites count again, deletions give nothing back), so the real disk receives no more
  than the sandbox's disk limit; past it :class:`BudgetExceeded` is raised;
* files are replaced atomically (written under a temporary name, then renamed), except that
  a file which only grew since the last pass gets its new tail appended; the final pass
  (``full=True``) rewrites every changed file whole.

A file the mirror wrote and the code later deleted is deleted from the destination too.
"""

from __future__ import annotations

import contextlib
import os
import stat

_CHUNK = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

Key = tuple[int, int, int]
"""``(inode, size, mtime_ns)`` of a source file when it was copied."""


class BudgetExceeded(OSError):
    """The mirror would write more than its byte budget to the destination."""


class Mirror:
    """Copies ``src_fd``'s tree into ``dst_fd``'s, pass after pass (see the module docstring).

    Args:
        src_fd: Descriptor of the source directory.
        dst_fd: Descriptor of the destination directory.
        budget: Most bytes written over the mirror's life; ``None`` for no limit.
    """

    def __init__(self, src_fd: int, dst_fd: int, budget: int | None = None) -> None:
        self.src, self.dst, self.budget = src_fd, dst_fd, budget
        self.written = 0
        self.copied: dict[str, tuple[Key, int]] = {}
        """Relative path -> (source key when copied, bytes now in the destination)."""

    def baseline(self) -> None:
        """Record the source as it is now, without copying: those files count as mirrored."""
        self._walk(copy=False, full=False)

    def sync(self, *, full: bool = False) -> None:
        """Copy what changed since the last pass and delete what vanished.

        Raises:
            BudgetExceeded: the pass would exceed the budget (the files before it are copied).
        """
        seen = self._walk(copy=True, full=full)
        for rel in [r for r in self.copied if r not in seen]:
            directory = self._dest_dir(os.path.dirname(rel), create=False)
            if directory is not None:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.basename(rel), dir_fd=directory)
                os.close(directory)
            del self.copied[rel]

    def _walk(self, *, copy: bool, full: bool) -> set[str]:
        seen: set[str] = set()
        walk = os.fwalk(".", dir_fd=self.src, follow_symlinks=False)
        for dirpath, dirnames, filenames, dirfd in walk:
            rel_dir = os.path.normpath(dirpath)
            target = self._dest_dir(rel_dir, create=True) if copy else None
            if copy and target is None:
                dirnames.clear()
                continue
            try:
                for name in filenames:
                    rel = os.path.normpath(os.path.join(rel_dir, name))
                    if self._visit(dirfd, target, name, rel, full):
                        seen.add(rel)
            finally:
                if target is not None:
                    os.close(target)
        return seen

    def _visit(self, dirfd: int, target: int | None, name: str, rel: str, full: bool) -> bool:
        try:
            source = os.open(name, _READ_FLAGS, dir_fd=dirfd)
        except OSError:
            return False  # a symlink (ELOOP), or gone
        try:
            info = os.fstat(source)
            if not stat.S_ISREG(info.st_mode):
                return False
            key = (info.st_ino, info.st_size, info.st_mtime_ns)
            previous = self.copied.get(rel)
            if target is None:
                self.copied[rel] = (key, info.st_size)
            elif previous is None or previous[0] != key:
                self._copy(source, target, name, rel, key, previous, full)
            return True
        finally:
            os.close(source)

    def _copy(
        self,
        source: int,
        target: int,
        name: str,
        rel: str,
        key: Key,
        previous: tuple[Key, int] | None,
        full: bool,
    ) -> None:
        size = key[1]
        grew = previous is not None and previous[0][0] == key[0] and size >= previous[1]
        offset = previous[1] if grew and not full and previous is not None else 0
        self._charge(size - offset)
        try:
            if offset:
                out = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=target)  # fmt: skip
                try:
                    _copy_bytes(source, out, offset, size - offset)
                finally:
                    os.close(out)
            else:
                temporary = f".{name}.mirror-tmp"
                out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                              | os.O_CLOEXEC, 0o644, dir_fd=target)  # fmt: skip
                try:
                    _copy_bytes(source, out, 0, size)
                finally:
                    os.close(out)
                os.replace(temporary, name, src_dir_fd=target, dst_dir_fd=target)
        except OSError:
            return  # e.g. a directory of that name in the destination; skip the file
        self.copied[rel] = (key, size)

    def _charge(self, nbytes: int) -> None:
        if self.budget is not None and self.written + nbytes > self.budget:
            raise BudgetExceeded(
                28, f"the run wrote more than {self.budget} bytes to its persisted directories"
            )
        self.written += nbytes

    def _dest_dir(self, rel_dir: str, *, create: bool) -> int | None:
        """Descriptor of ``rel_dir`` under the destination, walked without following links."""
        current = os.dup(self.dst)
        for part in [p for p in rel_dir.split(os.sep) if p not in ("", ".")]:
            try:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=current)
                child = os.open(part, _DIR_FLAGS, dir_fd=current)
            except OSError:
                os.close(current)
                return None
            os.close(current)
            current = child
        return current


def _copy_bytes(source: int, out: int, offset: int, count: int) -> None:
    while count > 0:
        chunk = os.pread(source, min(_CHUNK, count), offset)
        if not chunk:
            return
        view = memoryview(chunk)
        while view:
            view = view[os.write(out, view) :]
        offset += len(chunk)
        count -= len(chunk)
