"""Lenient reading of a run's JSON and JSONL files: what cannot be read is skipped and noted.

A plot is often made of a run that is still writing (a JSONL file may end in a torn line) or
that crashed; one unreadable file or line must not hide the rest. Every skip becomes a note
that names the file, is logged as a warning and is shown under the figure.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("langmarl.plots")


class RunFiles:
    """Reads files of one run directory, collecting notes on what it skipped.

    Args:
        root: The run directory.

    Attributes:
        notes: What was skipped or is worth knowing, in the order found.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        """Record ``text`` and log it as a warning."""
        log.warning("%s", text)
        self.notes.append(text)

    def json(self, relpath: str | Path) -> Any:
        """The parsed JSON file (a path relative to the run, or absolute), or ``None`` if it
        is missing or not valid JSON (noted)."""
        path = self.root / relpath
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError too
            self.note(f"skipped {path}: not readable JSON ({exc})")
            return None

    def jsonl(self, relpath: str | Path) -> list[dict[str, Any]]:
        """The JSON objects of a JSONL file, one per line; blank lines are ignored, lines
        that are not a JSON object are skipped (noted once per file, with line numbers)."""
        path = self.root / relpath
        if not path.is_file():
            return []
        records, bad = [], []
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if isinstance(record, dict):
                records.append(record)
            else:
                bad.append(number)
        if bad:
            where = ", ".join(map(str, bad[:5])) + (" …" if len(bad) > 5 else "")
            torn = (
                " (a torn last line: the run may still be writing)" if bad == [len(lines)] else ""
            )
            self.note(f"skipped {len(bad)} unreadable line(s) of {path}: line {where}{torn}")
        return records

    def records(self, relpath: str | Path) -> list[dict[str, Any]]:
        """A JSON file holding a list of objects (``metrics.json``); anything else → ``[]``
        (noted), non-objects in the list skipped (noted)."""
        data = self.json(relpath)
        if data is None:
            return []
        if not isinstance(data, list):
            self.note(
                f"skipped {self.root / relpath}: expected a JSON list, got {type(data).__name__}"
            )
            return []
        kept = [item for item in data if isinstance(item, dict)]
        if len(kept) < len(data):
            self.note(
                f"skipped {len(data) - len(kept)} non-object entries of {self.root / relpath}"
            )
        return kept
