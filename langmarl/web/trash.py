"""Soft delete: a deleted run moves to ``<runs dir>/.trash/<trash id>/`` with a note beside it
(``<trash id>.json``: where it came from, when), where ``find_runs`` no longer sees it (it
skips hidden directories); it can be restored to where it was, or purged for good.

A run whose process is alive is never moved: its trainer would go on writing into a
directory that is gone. Moving within the runs directory is one ``rename`` (same file
system), so a run is never half deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from langmarl.core.files import atomic_write_json
from langmarl.web.errors import ApiError
from langmarl.web.index import ID_SEPARATOR, TRASH_DIR, RunEntry


class Trash:
    """The trash of the runs directory ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / TRASH_DIR

    def _note(self, trash_id: str) -> Path:
        return self.folder / f"{trash_id}.json"

    def delete(self, entry: RunEntry) -> dict[str, Any]:
        """Move the run of ``entry`` into the trash.

        Raises:
            ApiError: 409 if the run's process is still running.
        """
        if entry.summary.status == "running" and entry.summary.layout == "current":
            raise ApiError(
                409, f"run {entry.run_id!r} is still running (its process is alive)",
                "stop it first (Ctrl-C in its terminal, kill its pid, or cancel its job), "
                "then delete it",
            )  # fmt: skip
        self.folder.mkdir(exist_ok=True)
        trash_id, n = entry.run_id, 1
        while (self.folder / trash_id).exists() or self._note(trash_id).exists():
            n += 1
            trash_id = f"{entry.run_id}-{n}"
        note = {
            "trash_id": trash_id, "run_id": entry.run_id, "kind": entry.summary.kind,
            "original": entry.path.relative_to(self.root).as_posix(), "deleted_at": time.time(),
        }  # fmt: skip
        atomic_write_json(self._note(trash_id), note)
        os.replace(entry.path, self.folder / trash_id)
        return note

    def items(self) -> list[dict[str, Any]]:
        """What the trash holds, most recently deleted first."""
        notes = []
        for path in self.folder.glob("*.json") if self.folder.is_dir() else []:
            try:
                note = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            held = self.folder / path.stem
            if isinstance(note, dict) and held.is_dir() and not held.is_symlink():
                notes.append({**note, "trash_id": path.stem})  # the file, not its text, names it
        return sorted(notes, key=lambda n: n.get("deleted_at", 0), reverse=True)

    def _item(self, trash_id: str) -> dict[str, Any]:
        for note in self.items():
            if note.get("trash_id") == trash_id:
                return note
        raise ApiError(404, f"no run {trash_id!r} in the trash", "GET /api/trash lists them")

    def restore(self, trash_id: str) -> dict[str, Any]:
        """Move a trashed run back where it was.

        Raises:
            ApiError: 404 for an unknown id, 409 if a run now occupies its old place.
        """
        note = self._item(trash_id)
        target = self.root / str(note["original"])
        if (
            not target.parent.resolve().is_relative_to(self.root.resolve())
            or ".." in Path(str(note["original"])).parts
        ):
            raise ApiError(
                409, f"{note['original']!r} now leads out of the runs directory (a symlink)",
                "replace the link by a real directory, then restore",
            )  # fmt: skip
        if target.exists():
            raise ApiError(
                409, f"{note['original']!r} exists again in the runs directory",
                "move or delete that directory, then restore",
            )  # fmt: skip
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.folder / trash_id, target)
        self._note(trash_id).unlink(missing_ok=True)
        run_id = ID_SEPARATOR.join(Path(str(note["original"])).parts)
        return {**note, "run_id": run_id}

    def purge(self, trash_id: str) -> dict[str, Any]:
        """Delete a trashed run for good.

        Raises:
            ApiError: 404 for an unknown id.
        """
        note = self._item(trash_id)
        shutil.rmtree(self.folder / trash_id)
        self._note(trash_id).unlink(missing_ok=True)
        return note
