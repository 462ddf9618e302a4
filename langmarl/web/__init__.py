"""The dashboard's REST API over a runs directory (``langmarl dashboard``).

Modules: ``errors`` (every error as ``{"error", "fix"}`` with its HTTP code), ``security``
(the bind rule and the Bearer token), ``index`` (the runs found under the directory, cached
per run on its files' mtime and size), ``runfiles`` (safe paths inside a run), ``metadata``
(alias, star, tags), ``trash`` (soft delete, restore, purge), ``routes/`` (one module per
area: runs, language, weights, reward, files, trash, stream, jobs) and ``app``
(:func:`create_app`, :func:`serve`). Only this namespace is importable without the
``server`` extra (FastAPI, uvicorn).

Run ids in URLs are paths relative to the runs directory with ``~`` between the parts
(``runs/group/seed1`` → ``group~seed1``), so one URL segment names a nested run.
"""

from __future__ import annotations

from typing import Any

from langmarl.web.defaults import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_RUNS_DIR, TOKEN_ENV

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "DEFAULT_RUNS_DIR", "TOKEN_ENV", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from langmarl.web.app import create_app

        return create_app
    raise AttributeError(f"module 'langmarl.web' has no attribute {name!r}")
