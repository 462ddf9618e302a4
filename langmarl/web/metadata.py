"""What a user says about a run: an alias, a star and tags, in the run's ``metadata.json``.

Prompt2Policy sessions already keep their own ``metadata.json`` (the prompt, the env);
the dashboard's keys are merged into it, never replacing what the session wrote. The file
is written atomically (temp file + rename), secrets scrubbed, like every run file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from langmarl.store.run import RunDir
from langmarl.web.runfiles import read_json

METADATA_FILE = "metadata.json"
"""The same name :class:`~langmarl.p2p.session.records.SessionRecord` uses for a session's
metadata."""


class RunMetadata(BaseModel):
    """The dashboard's keys of ``metadata.json``."""

    alias: str | None = None
    """A display name (the run id stays the key)."""
    starred: bool = False
    tags: list[str] = Field(default_factory=list)


class MetadataPatch(BaseModel):
    """``PATCH /api/runs/{id}/metadata``: only the fields sent change."""

    model_config = ConfigDict(extra="forbid")

    alias: str | None = Field(default=None, max_length=200)
    """A display name; an empty string removes it."""
    starred: bool | None = None
    tags: list[str] | None = Field(default=None, max_length=50)
    """The run's tags (replaces the old list; duplicates and blanks dropped)."""


def read_metadata(run: Path) -> dict[str, Any]:
    """The whole ``metadata.json`` of ``run`` (``{}`` if absent or unreadable)."""
    data = read_json(run / METADATA_FILE)
    return data if isinstance(data, dict) else {}


def run_metadata(run: Path) -> RunMetadata:
    """The dashboard's keys of ``run``'s metadata (defaults where absent or malformed)."""
    data = read_metadata(run)
    tags = data.get("tags")
    return RunMetadata(
        alias=data["alias"] if isinstance(data.get("alias"), str) else None,
        starred=data.get("starred") is True,
        tags=[t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
    )


def update_metadata(run: Path, patch: MetadataPatch) -> RunMetadata:
    """Merge ``patch`` into ``run``'s ``metadata.json`` (other keys kept) and return it."""
    data = read_metadata(run)
    changes = patch.model_dump(exclude_unset=True)
    if "alias" in changes:
        alias = (changes["alias"] or "").strip()
        data["alias"] = alias or None
    if changes.get("starred") is not None:
        data["starred"] = changes["starred"]
    if changes.get("tags") is not None:
        data["tags"] = list(dict.fromkeys(t.strip() for t in changes["tags"] if t.strip()))
    RunDir(run).write_json(METADATA_FILE, data)
    return run_metadata(run)
