"""A run taken out of langmarl: its metrics as CSV or JSONL, or its files as an archive.

What W&B's "download", TensorBoard's CSV export and SB3's monitor files give: the numbers of
a run in a form any spreadsheet or pandas reads, and the whole run to hand to a colleague.

Decisions:

* The format follows the output's suffix (``.csv``, ``.jsonl``, ``.tar.gz``/``.tgz``,
  ``.zip``); anything else is refused naming the four, so a typo never writes a file nobody
  can open.
* CSV columns are the union of every metrics line's keys, ``step`` first, the rest sorted;
  nested values (lists, dicts) are written as JSON text in their cell, never dropped.
* An archive holds the run's files under one folder named after the run. The lock and
  temporary files stay out; checkpoints (model weights: most of a weight run's bytes) only
  with ``checkpoints=True``. Symlinks are skipped, so an archive never carries a file from
  outside the run. Every output is written atomically.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.core.files import atomic_write_text, read_jsonl
from langmarl.store.run import METRICS_FILE

FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".tar.gz": "tar", ".tgz": "tar", ".zip": "zip"}
"""Output suffix → format."""
CHECKPOINT_DIRS = ("checkpoints", "policies", "checkpoint")
"""Top-level folders of a run that hold model weights (left out unless asked for)."""
SKIPPED = (".lock",)


def export_format(out: Path) -> str:
    """The format ``out``'s suffix names.

    Raises:
        ConfigError: for any other suffix, naming the ones there are.
    """
    name = out.name.lower()
    for suffix, kind in FORMATS.items():
        if name.endswith(suffix):
            return kind
    raise ConfigError(
        f"cannot tell the export format from {out.name!r}: end the output's name with "
        f"{', '.join(FORMATS)} (metrics as CSV or JSONL, or the run's files as an archive)"
    )


def metrics_csv(records: list[dict[str, Any]]) -> str:
    """``records`` (metrics lines) as CSV text: ``step`` first, then every other key sorted."""
    keys = sorted({key for record in records for key in record} - {"step"})
    columns = (["step"] if any("step" in r for r in records) else []) + keys
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for record in records:
        writer.writerow([_cell(record.get(column)) for column in columns])
    return buffer.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def run_files(run: Path, checkpoints: bool = False) -> Iterator[Path]:
    """The files an archive of ``run`` holds, sorted: regular files only (no symlinks), no
    lock or temporary files, checkpoints only when asked."""
    for path in sorted(run.rglob("*")):
        relative = path.relative_to(run)
        if path.is_symlink() or not path.is_file() or path.name in SKIPPED:
            continue
        if path.name.endswith(".tmp") or any(p.is_symlink() for p in path.parents if p != run):
            continue
        if not checkpoints and relative.parts[0] in CHECKPOINT_DIRS:
            continue
        yield path


def export_run(run: Path, out: Path, checkpoints: bool = False) -> int:
    """Write ``run``'s metrics or files to ``out`` (format from the suffix, atomically).

    Returns:
        Metrics lines written (CSV/JSONL), or files archived.
    """
    kind = export_format(out)
    if kind in ("csv", "jsonl"):
        records = [r for r in read_jsonl(run / METRICS_FILE) if isinstance(r, dict)]
        text = (
            metrics_csv(records)
            if kind == "csv"
            else "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        )
        atomic_write_text(out, text)
        return len(records)
    files = list(run_files(run, checkpoints))
    _write_archive(run, files, kind, out)
    return len(files)


def _write_archive(run: Path, files: list[Path], kind: str, out: Path) -> None:
    """Stream the archive into a temporary file beside ``out``, then rename it (a run's
    checkpoints can be gigabytes: never held in memory)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(handle)
    names = [(path, f"{run.name}/{path.relative_to(run).as_posix()}") for path in files]
    try:
        if kind == "zip":
            with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
                for path, name in names:
                    archive.write(path, name)
        else:
            with tarfile.open(temporary, mode="w:gz") as archive:
                for path, name in names:
                    archive.add(path, name, recursive=False)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
