"""Downloads of a run, and runs compared: what W&B's "download" and TensorBoard's CSV export
give, over :mod:`langmarl.store.export` and :mod:`langmarl.store.compare`.

``GET /api/runs/{id}/export?format=csv|jsonl|zip``
    The run's metrics as CSV (``step`` first, every other key sorted) or JSONL (its lines as
    written), or its files as a ``.zip`` (one folder named after the run; checkpoints, locks
    and temporary files left out). An attachment with a filename (``<run>-metrics.csv``,
    ``<run>.zip``).
``GET /api/compare?runs=a,b``
    The settings whose values differ between the runs' configs (one row per dotted key), and
    each numeric series every run has (last, lowest, highest, points per run).

Secrets: the same guards as every route. Metrics and config values pass the dashboard's
scrubber; in the archive, text files (as the files route sees them) pass the environment's
redactor again, so a download never holds what ``GET .../files/…`` would not show.
"""

from __future__ import annotations

import json
import re
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response, StreamingResponse

from langmarl.core.files import read_jsonl
from langmarl.core.secrets import REDACTED
from langmarl.store.compare import MISSING, compare_runs
from langmarl.store.export import metrics_csv, run_files
from langmarl.store.run import METRICS_FILE
from langmarl.web.errors import ApiError
from langmarl.web.index import RunEntry
from langmarl.web.routes.files import MAX_SCRUBBED_BYTES, TEXT_SUFFIXES, UNTRUSTED
from langmarl.web.state import SECRET_KEY, Dashboard, DashboardDep

router = APIRouter(tags=["export"])

Format = Literal["csv", "jsonl", "zip"]
MEDIA_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson",
               "zip": "application/zip"}  # fmt: skip
"""Content type of each download."""
CHUNK_BYTES = 1 << 20
"""Bytes of the archive sent per chunk."""
MAX_COMPARED = 12
"""Most runs one comparison takes (a chart of more is unreadable)."""


def download_name(run_id: str, kind: Format) -> str:
    """The file name a download is saved under: the run id in safe characters."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", run_id).strip("._") or "run"
    return f"{stem}.zip" if kind == "zip" else f"{stem}-metrics.{kind}"


def _metrics_text(board: Dashboard, entry: RunEntry, kind: Format) -> str:
    records = board.scrub([r for r in read_jsonl(entry.path / METRICS_FILE) if isinstance(r, dict)])
    if kind == "csv":
        return metrics_csv(records)
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def _write_zip(board: Dashboard, run: Path, out: BinaryIO) -> None:
    """The run's files (:func:`~langmarl.store.export.run_files`, no checkpoints, no hidden
    files) into ``out`` under one folder, text files redacted."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in run_files(run, checkpoints=False):
            relative = path.relative_to(run)
            if any(part.startswith(".") for part in relative.parts):
                continue  # what the files route refuses to serve stays out
            name = f"{run.name}/{relative.as_posix()}"
            if path.suffix in TEXT_SUFFIXES and path.stat().st_size <= MAX_SCRUBBED_BYTES:
                archive.writestr(name, board.redact(path.read_text("utf-8", errors="replace")))
            else:
                archive.write(path, name)


def _chunks(spool: BinaryIO) -> Iterator[bytes]:
    """``spool`` from its start, a chunk at a time; closed at the end or when the client
    goes away (the generator is closed then), which deletes it."""
    try:
        spool.seek(0)
        while chunk := spool.read(CHUNK_BYTES):
            yield chunk
    finally:
        spool.close()


def _zip_response(board: Dashboard, entry: RunEntry, filename: str) -> StreamingResponse:
    """The archive, written to an anonymous temporary file first (a run's files may not fit
    in memory; the file has no name, so nothing is left behind whatever happens) and
    streamed from it."""
    spool = tempfile.TemporaryFile(prefix="langmarl-export-")  # noqa: SIM115 - _chunks closes it
    try:
        _write_zip(board, entry.path, spool)
        size = spool.tell()
    except BaseException:
        spool.close()
        raise
    headers = {**UNTRUSTED, "Content-Length": str(size),
               "Content-Disposition": f'attachment; filename="{filename}"'}  # fmt: skip
    return StreamingResponse(_chunks(spool), media_type=MEDIA_TYPES["zip"], headers=headers)


@router.get(
    "/runs/{run_id}/export",
    response_class=Response,
    responses={200: {"content": {media: {} for media in MEDIA_TYPES.values()}}},
)
def export_run(
    run_id: str,
    board: DashboardDep,
    format: Format = Query("csv", description="csv or jsonl: the metrics; zip: the files."),
) -> Response:
    """The run's metrics (CSV, JSONL) or its files (a ``.zip`` without checkpoints), as an
    attachment named after the run."""
    entry = board.run(run_id)
    filename = download_name(run_id, format)
    if format == "zip":
        return _zip_response(board, entry, filename)
    return Response(
        _metrics_text(board, entry, format), media_type=MEDIA_TYPES[format],
        headers={**UNTRUSTED, "Content-Disposition": f'attachment; filename="{filename}"'},
    )  # fmt: skip


def _diff_rows(board: Dashboard, diff: dict[str, list[str]]) -> list[dict[str, Any]]:
    """One row per differing setting; a secret-named setting's values hidden (any part of
    its dotted key: ``llm.api_key``)."""
    rows = []
    for key, values in diff.items():
        secret = any(SECRET_KEY.search(part) for part in key.split("."))
        shown = [v if v == MISSING or not secret else REDACTED for v in values]
        rows.append({"key": key, "values": board.scrub(shown)})
    return rows


@router.get("/compare")
def compare(
    board: DashboardDep,
    runs: str = Query(..., description="Comma-separated run ids, two or more."),
) -> dict[str, Any]:
    """Runs side by side: their listings, the settings whose values differ between their
    configs (``config_diff``: key and each run's value, in the order given), and per numeric
    metrics series every run has, each run's last, lowest and highest value."""
    ids = list(dict.fromkeys(part.strip() for part in runs.split(",") if part.strip()))
    if not 2 <= len(ids) <= MAX_COMPARED:
        raise ApiError(
            400, f"compare takes 2 to {MAX_COMPARED} runs, got {len(ids)}",
            "pass ?runs=<id>,<id> (run ids as GET /api/runs lists them)",
        )  # fmt: skip
    entries = [board.run(run_id) for run_id in ids]
    found = compare_runs([entry.path for entry in entries])
    series = {
        key: [{"last": s.last, "low": s.low, "high": s.high, "points": s.points} for s in values]
        for key, values in found.series.items()
    }
    return {
        "runs": [entry.as_dict() for entry in entries],
        "config_diff": _diff_rows(board, found.config_diff),
        "series": series,
    }
