"""``GET /api/benchmarks/options``: what ``POST /api/benchmarks`` can be started with, as
the reference system's benchmark options: the environments a case can name, the shipped
case sets and session configs, the LLM presets for ``llm`` and ``vlm``, and the defaults.

The case sets and session configs are the files under ``configs/p2p/`` of the server's
working directory (where ``langmarl dashboard`` runs from a checkout): every ``*.csv`` is a
case set, answered as ``cases_csv`` text ready to send, its ``check`` and ``reference``
paths made relative to the working directory (the directory a job may read from); every
YAML/JSON file the session kind's own check accepts is a session config, answered as the
mapping to send as ``session``. None there: both lists are empty. The server imports no
space: the envs and the check come through the kinds' entry points.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from fastapi import APIRouter

from langmarl.config.loading import read_mapping
from langmarl.core.errors import LangmarlError
from langmarl.jobs.cores import core_pool
from langmarl.llm.preset_table import PRESETS
from langmarl.store import kinds
from langmarl.web.routes.benchmarks import BenchRequest
from langmarl.web.routes.catalogs import catalog

router = APIRouter(tags=["benchmarks"])

CONFIGS_DIR = Path("configs") / "p2p"
"""Where the shipped case sets and session configs are, from the working directory."""
PATH_COLUMNS = ("check", "reference")
SESSION_KIND = "p2p"
PLACED = ("env_id", "runs_dir", "run_id")
"""Session keys a benchmark sets itself (each case names its env): left out of a config."""


def case_set(path: Path) -> dict[str, Any]:
    """A case set: its name, path, count, categories and the CSV text to send."""
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    for row in rows:
        for column in PATH_COLUMNS:
            value = (row.get(column) or "").strip()
            if value and not Path(value).is_absolute():
                row[column] = (path.parent / value).as_posix()
    text = io.StringIO()
    if rows:
        writer = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return {
        "name": path.stem, "path": path.as_posix(), "cases": len(rows),
        "envs": sorted({row.get("env_id") or "" for row in rows} - {""}),
        "categories": sorted({row.get("category") or "" for row in rows} - {""}),
        "cases_csv": text.getvalue(),
    }  # fmt: skip


def session_configs() -> list[dict[str, Any]]:
    """The shipped files the session kind's check accepts, each as ``session`` to send."""
    check = kinds.get(SESSION_KIND).validate_config
    found = []
    files = sorted(CONFIGS_DIR.glob("*.yaml")) + sorted(CONFIGS_DIR.glob("*.json"))
    for path in files:
        try:
            data = read_mapping(path)
            if check is not None:
                kinds.load(check)(data, str(path))
        except (LangmarlError, OSError, ValueError):
            continue  # another kind's config (a training run's), or a broken file
        session = {k: v for k, v in data.items() if k not in PLACED}
        found.append({"name": path.stem, "path": path.as_posix(), "session": session})
    return found


@router.get("/benchmarks/options")
def options() -> dict[str, Any]:
    """What a benchmark can be started with: ``envs`` (each case's ``env_id``),
    ``case_sets`` (shipped cases as ``cases_csv``), ``session_configs`` (shipped session
    settings as ``session``), ``llms`` (presets for ``llm``; the multimodal ones for
    ``vlm``), ``max_cpus`` (cores a job may reserve) and the request's ``defaults``."""
    sets = sorted(CONFIGS_DIR.glob("*.csv")) if CONFIGS_DIR.is_dir() else []
    envs = [{"env_id": e["env_id"], "simulator": e.get("simulator"),
             "description": e.get("description")} for e in catalog("envs")]  # fmt: skip
    llms = [{"name": name, "description": preset.description,
             "multimodal": bool(preset.fields.get("is_multimodal"))}
            for name, preset in PRESETS.items()]  # fmt: skip
    defaults = {name: field.get_default(call_default_factory=True)
                for name, field in BenchRequest.model_fields.items()}  # fmt: skip
    defaults["resources"] = defaults["resources"].model_dump()
    return {
        "envs": envs, "case_sets": [case_set(path) for path in sets],
        "session_configs": session_configs() if CONFIGS_DIR.is_dir() else [],
        "llms": llms, "max_cpus": len(core_pool()), "defaults": defaults,
    }  # fmt: skip
