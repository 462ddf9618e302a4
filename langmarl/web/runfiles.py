"""Paths inside a run that the API may read: never outside the runs directory.

:func:`safe_file` accepts only a relative path of plain parts (no ``..``, no absolute path,
no hidden part such as ``.lock`` or a ``.*.tmp`` a writer left) and then resolves symlinks:
the real file must still lie inside the run, and the run inside the runs directory. Secrets
never reach run files (every writer scrubs them), so what passes may be served.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from langmarl.web.errors import ApiError

LIST_LIMIT = 1000
"""Most entries a directory listing returns."""


def read_json(path: Path) -> Any:
    """The JSON in ``path``; ``None`` if it is missing, torn or not UTF-8 (a view shows what
    is there; the writers' own readers report corrupt files)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def safe_file(root: Path, run: Path, relpath: str) -> Path:
    """The real path of ``relpath`` inside ``run`` (a file or a directory).

    Raises:
        ApiError: 400 for an absolute path or a ``..`` part, 403 for a hidden part or a
            symlink that leads out of the run or the runs directory, 404 if it does not exist.
    """
    fix = "pass a path relative to the run, as GET /api/runs/{run_id}/files lists it"
    if not relpath:
        return run.resolve()
    pure = PurePosixPath(relpath)
    if pure.is_absolute() or relpath.startswith(("/", "\\")) or ":" in pure.parts[0]:
        raise ApiError(400, f"absolute path {relpath!r} refused", fix)
    if any(part == ".." for part in pure.parts) or "\\" in relpath:
        raise ApiError(400, f"path {relpath!r} leaves the run ('..')", fix)
    if any(part.startswith(".") for part in pure.parts):
        raise ApiError(403, f"{relpath!r} is a hidden file (locks, temp files): not served", fix)
    target = run.joinpath(*pure.parts)
    if not target.exists() and not target.is_symlink():
        raise ApiError(404, f"no file {relpath!r} in the run", fix)
    real, real_run, real_root = target.resolve(), run.resolve(), root.resolve()
    if not (real.is_relative_to(real_run) and real_run.is_relative_to(real_root)):
        raise ApiError(
            403, f"{relpath!r} is a link out of the run: not served",
            "copy the file into the run directory if it should be shown",
        )  # fmt: skip
    if not real.exists():
        raise ApiError(404, f"{relpath!r} is a broken link", fix)
    return real


def listing(folder: Path) -> list[dict[str, object]]:
    """The visible entries of ``folder``: name, ``dir`` or ``file``, size in bytes."""
    entries: list[dict[str, object]] = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith("."):
            continue
        is_dir = child.is_dir()
        size = 0 if is_dir else child.stat().st_size if child.exists() else 0
        entries.append({"name": child.name, "type": "dir" if is_dir else "file", "size": size})
        if len(entries) >= LIST_LIMIT:
            break
    return entries
