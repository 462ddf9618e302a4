"""Crash-safe file writes: a reader sees the old content or the new, never a torn file.

A write that the system refuses (disk full, read-only file system, no permission) raises
:class:`StorageError` naming the file and the fix; a file that cannot be read back (corrupt
JSON, not UTF-8) raises :class:`RunFileError` naming the file, the place and the fix.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from langmarl.core.errors import ConfigError, RunFileError, StorageError

_WRITE_PROBLEMS = {
    errno.ENOSPC: "no space left on the device; free some space",
    errno.EDQUOT: "the disk quota is exhausted; free some space",
    errno.EROFS: "the file system is read-only; use a writable directory",
    errno.EACCES: "permission denied; make the directory writable",
    errno.EPERM: "operation not permitted; make the directory writable",
}
_READ_FIX = "Restore or delete the file (see the README's reliability section)."


@contextlib.contextmanager
def storage_errors(path: Path) -> Iterator[None]:
    """Turn the ``OSError`` of a refused write to ``path`` into a :class:`StorageError`."""
    try:
        yield
    except OSError as exc:
        problem = _WRITE_PROBLEMS.get(exc.errno or 0)
        if problem is None:
            raise
        raise StorageError(
            f"cannot write {path}: {problem}, then run the same command again "
            "(what was written before is intact)"
        ) from exc


SAVE_AS_UTF8 = "save it as UTF-8 (e.g. iconv -f latin1 -t utf-8 OLD > NEW) and run again."
"""The fix for an input file (config, dataset) in another encoding."""


def _near_file(path: Path) -> str:
    """`` Did you mean '<dir>/<name>'?`` for a file beside ``path`` with a close name."""
    import difflib

    folder = path.parent
    try:
        names = [p.name for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.75)
    return f" Did you mean {str(folder / close[0])!r}?" if close else ""


def read_input_text(path: Path, what: str = "Config file") -> str:
    """The text of a file the user gave langmarl (a config, a dataset), which must be UTF-8.

    Args:
        path: The file.
        what: How messages name it ("Config file", "Dataset file", ...).

    Raises:
        ConfigError: naming the file if it is missing, unreadable or not UTF-8.
    """
    if not path.is_file():
        raise ConfigError(f"{what} {str(path)!r} does not exist.{_near_file(path)}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{what} {str(path)!r} is not UTF-8 text (byte {exc.start} is "
            f"0x{exc.object[exc.start]:02x}): {SAVE_AS_UTF8}"
        ) from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {what.lower()} {str(path)!r}: {exc.strerror}.") from None


def read_input_jsonl(path: Path, what: str = "Dataset file") -> list[tuple[int, Any]]:
    """The JSON value of every non-blank line of a JSONL file the user gave langmarl, with
    its line number (counted from 1).

    Raises:
        ConfigError: naming the file and the line if the file is missing or not UTF-8, or a
            line is not JSON.
    """
    rows = []
    for number, line in enumerate(read_input_text(path, what).splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{what} {str(path)!r}, line {number}: not JSON ({exc.msg}); give one JSON "
                "value per line"
            ) from None
    return rows


def read_text_file(path: Path, fix: str = _READ_FIX) -> str:
    """The UTF-8 text of ``path``.

    Raises:
        RunFileError: if the file is not UTF-8 (``fix`` says what to do).
    """
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RunFileError(path, f"not UTF-8 text (byte {exc.start})", fix) from None


def load_json_file(path: Path, fix: str = _READ_FIX) -> Any:
    """The JSON value in ``path``.

    Raises:
        RunFileError: if the file is not UTF-8 or not valid JSON (e.g. cut short).
    """
    text = read_text_file(path, fix)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        problem = "empty" if not text.strip() else f"not valid JSON ({exc.msg} at {where})"
        raise RunFileError(path, problem, fix) from None


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory, fsync and rename."""
    with storage_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` atomically."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def append_jsonl(path: Path, record: Any) -> None:
    """Append one JSON line and fsync. A crash can only lose or truncate the last line:
    :func:`read_jsonl` skips it, and the next append first cuts it off, so a torn line
    never ends up in the middle of the file."""
    line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
    with storage_errors(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a+b") as handle:
            _drop_torn_tail(handle)
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def _drop_torn_tail(handle: BinaryIO, chunk: int = 4096) -> None:
    """Truncate ``handle`` after its last newline when its last line has none."""
    end = handle.seek(0, os.SEEK_END)
    if end == 0:
        return
    handle.seek(end - 1)
    if handle.read(1) == b"\n":
        return
    position = end
    while position > 0:
        start = max(0, position - chunk)
        handle.seek(start)
        found = handle.read(position - start).rfind(b"\n")
        if found >= 0:
            handle.truncate(start + found + 1)
            return
        position = start
    handle.truncate(0)


def read_jsonl(path: Path) -> list[Any]:
    """Read a JSONL file, skipping a torn last line left by a crash.

    Raises:
        RunFileError: for a corrupt line before the last one, or a file that is not UTF-8.
    """
    if not path.exists():
        return []
    records = []
    lines = read_text_file(path).splitlines()
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number == len(lines) - 1:
                break
            fix = "Delete that line (every other line is kept) and run again."
            raise RunFileError(path, f"line {number + 1} is not JSON ({exc.msg})", fix) from None
    return records


@contextlib.contextmanager
def exclusive_lock(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_file`` (made if missing) for the block, waiting
    for whoever holds it; nothing where there is no ``fcntl``. Closing the file drops it."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(lock_file, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
