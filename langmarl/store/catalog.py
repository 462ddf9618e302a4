"""Find runs of every kind under a directory and summarise them (``langmarl runs``).

::

    find_runs(root)  = every directory under root (depth <= 3) that open_run recognises;
                       a run's own sub-directories are not searched
    open_run(dir)    = RunSummary: run.json of the run contract, else an older layout read
                       as such (layout "old"), else None
    describe(dir)    = RunSummary + what the kind has to show (prompts and their diffs,
                       held-out before/after, iterations and scores)

Older layouts (before the run contract) are still listed and shown: a ``run.json`` without
``schema_version`` (language runs), ``run_config.json``/``config.json`` naming the
algorithm (MAGRPO, IAC, MAAC), ``parl_curves.json`` (PARL GRPO) and ``status.json`` +
``metadata.json`` (Prompt2Policy sessions). Their status is what they recorded, or
``unknown`` where they recorded none. Only plain JSON is read here: the store does not import
the spaces that wrote the runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

import langmarl.store.kinds as kinds
from langmarl.core.errors import ConfigError, LangmarlError
from langmarl.core.files import read_jsonl
from langmarl.store.kinds import RunKindSpec
from langmarl.store.run import METRICS_FILE, RUN_FILE, RUN_STATUSES, RunDir

P2P_STATUS: dict[str, str] = {
    "pending": "running",
    "running": "running",
    "passed": "completed",
    "max_iterations": "completed",
    "invalid_code": "failed",
    "error": "failed",
    "cancelled": "stopped",
}
"""A Prompt2Policy session's status → the run status (the session's own is kept as
``outcome``)."""
LISTED_STATUSES = (*RUN_STATUSES, "unknown", "unreadable")
"""What a listed run's status can be: ``unknown`` for an older layout that recorded none,
``unreadable`` for a corrupt ``run.json``."""
MAX_DEPTH = 3
"""``runs/<id>``, ``experiments/<id>``, ``experiments/<group>/<id>``, one level more."""


@dataclass
class RunSummary:
    """One line of ``langmarl runs``."""

    path: Path
    run_id: str
    kind: str
    status: str
    error: str | None = None
    updated_at: float = 0.0
    progress: str = ""
    """``3/4 iterations``, ``12/20 steps``, ``2 iterations``."""
    score: float | None = None
    """The held-out score when the run has one, else the kind's training score (its
    ``score_label``: last reward, best reward, best intent score)."""
    score_label: str = ""
    """What :attr:`score` is: ``held-out``, or the kind's ``score_label``."""
    layout: str = "current"
    """``current`` (the run contract) or ``old`` (a layout before it, read as such)."""
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "path": str(self.path)}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _metrics(run: Path) -> list[dict[str, Any]]:
    try:
        rows = read_jsonl(run / METRICS_FILE)
    except LangmarlError:
        return []
    if not rows and isinstance(_json(run / "metrics.json"), list):
        rows = _json(run / "metrics.json")
    return [r for r in rows if isinstance(r, dict)]


def _progress(spec: RunKindSpec, info: dict[str, Any], metrics: list[dict[str, Any]]) -> str:
    """``3/4 iterations``, ``12 steps``: units done (the kind's run.json field, else the last
    metrics line's step) out of the units planned, when the kind records them."""
    if spec.done_field is not None:
        done = int(info.get(spec.done_field) or 0)
    else:  # lines count finished units from 1 (older PARL GRPO runs: from 0)
        first_line = 1 if metrics and metrics[0].get("step") == 0 else 0
        done = int(metrics[-1].get("step", 0)) + first_line if metrics else 0
    target = info.get(spec.target_field) if spec.target_field else None
    return f"{done}/{target} {spec.unit}s" if target else f"{done} {spec.unit}s"


def _score(spec: RunKindSpec, info: dict[str, Any], metrics: list[dict[str, Any]]) -> float | None:
    if spec.best_field is not None:
        return _number(info.get(spec.best_field))
    return _number(metrics[-1].get(spec.score_key)) if metrics else None


def _from_record(run: Path, info: dict[str, Any]) -> RunSummary:
    kind = str(info.get("kind"))
    spec = kinds.find(kind) or RunKindSpec(kind, kind)
    metrics = [] if spec.done_field and spec.best_field else _metrics(run)
    heldout = kinds.load(spec.heldout)(run) if spec.heldout else None
    score, label = (heldout, "held-out") if heldout is not None else (None, spec.score_label)
    return RunSummary(
        path=run, run_id=run.name, kind=spec.name, status=str(info.get("status", "unknown")),
        error=info.get("error"), updated_at=float(info.get("updated_at") or 0.0),
        layout="current" if info.get("schema_version") else "old",
        progress=_progress(spec, info, metrics), score_label=label,
        score=score if score is not None else _score(spec, info, metrics),
    )  # fmt: skip


def _old_weight_run(run: Path) -> RunSummary | None:
    config = _json(run / "run_config.json") or _json(run / "config.json") or {}
    algorithm = config.get("algorithm") if isinstance(config, dict) else None
    spec = kinds.find(algorithm) if isinstance(algorithm, str) else None
    if spec is None or spec.view != "weight":
        return None
    algorithm = spec.name
    heldout = _json(run / "heldout.json") or {}
    status = "completed" if isinstance(heldout, dict) and heldout.get("after") else "unknown"
    metrics = _metrics(run)
    return RunSummary(
        path=run, run_id=run.name, kind=algorithm, status=status, layout="old",
        updated_at=run.stat().st_mtime, progress=_progress(spec, {}, metrics),
        score=_score(spec, {}, metrics),
    )  # fmt: skip


def _old_parl_grpo(run: Path) -> RunSummary | None:
    if not (run / "parl_curves.json").is_file():
        return None
    metrics = _metrics(run)
    done = len(metrics)
    return RunSummary(
        path=run, run_id=run.name, kind="parl_grpo", status="unknown", layout="old",
        updated_at=run.stat().st_mtime, progress=f"{done} steps",
        score=_score(kinds.get("parl_grpo"), {}, metrics),
    )  # fmt: skip


def _old_session(run: Path) -> RunSummary | None:
    status = _json(run / "status.json")
    if not isinstance(status, dict) or not (
        (run / "metadata.json").is_file() or (run / "loop_history.json").is_file()
    ):
        return None
    history = _json(run / "loop_history.json") or {}
    outcome = str(status.get("status", "unknown"))
    return RunSummary(
        path=run, run_id=run.name, kind="p2p", status=P2P_STATUS.get(outcome, "unknown"),
        error=status.get("error"), updated_at=float(status.get("updated_at") or 0.0),
        layout="old", progress=f"{len(history.get('iterations', []))} iterations",
        score=_number(history.get("best_score")), details={"outcome": outcome},
    )  # fmt: skip


def open_run(path: str | Path) -> RunSummary | None:
    """The summary of the run in ``path``; ``None`` if it is not a run.

    Raises:
        RunFileError: if its ``run.json`` is corrupt or from a newer langmarl.
    """
    run = Path(path)
    if not run.is_dir():
        return None
    if (run / RUN_FILE).is_file():
        return _from_record(run, RunDir(run).record().model_dump())
    for reader in (_old_weight_run, _old_parl_grpo, _old_session):
        found = reader(run)
        if found is not None:
            return found
    return None


def find_runs(
    root: str | Path,
    kind: str | None = None,
    status: str | None = None,
    opener: Callable[[Path], RunSummary | None] = open_run,
) -> list[RunSummary]:
    """Every run under ``root`` (``root`` itself included), newest first; a run whose
    ``run.json`` cannot be read is listed with status ``unreadable`` and the reason.
    ``opener`` reads one directory (:func:`open_run`; the dashboard passes a cached one).
    Symlinked directories below ``root`` are not followed: a run is where it lies, so
    nothing done to a listed run (the dashboard's delete and purge) reaches outside."""
    found: list[RunSummary] = []

    def visit(folder: Path, depth: int) -> None:
        try:
            summary = opener(folder)
        except LangmarlError as exc:
            summary = RunSummary(folder, folder.name, "?", "unreadable", error=str(exc))
        if summary is not None:
            found.append(summary)
            return
        if depth < MAX_DEPTH:
            for child in sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()):
                if not child.name.startswith("."):
                    visit(child, depth + 1)

    if Path(root).is_dir():
        visit(Path(root), 0)
    runs = [r for r in found if (kind is None or r.kind == kind) and (status in (None, r.status))]
    return sorted(runs, key=lambda r: r.updated_at, reverse=True)


def describe(path: str | Path) -> RunSummary:
    """:func:`open_run` plus what the kind's ``details`` entry point adds (language:
    ``policies`` and ``diffs`` against the first checkpoint; weight space: ``checkpoints``
    and ``heldout``; Prompt2Policy: ``iterations`` with their scores); every kind:
    ``last_metrics``.

    Raises:
        ConfigError: if ``path`` holds no run.
    """
    summary = open_run(path)
    if summary is None:
        raise ConfigError(
            f"{path} holds no run (no {RUN_FILE}, nor an older run layout): pass a run "
            "directory as `langmarl runs` lists it"
        )
    metrics = _metrics(summary.path)
    summary.details["last_metrics"] = metrics[-1] if metrics else None
    spec = kinds.find(summary.kind)
    if spec is not None and spec.details is not None:
        found = kinds.load(spec.details)(summary.path)
        typed = is_dataclass(found) and not isinstance(found, type)
        summary.details.update(asdict(found) if typed else found)
    return summary


def weight_heldout(run: Path) -> float | None:
    """The trained agents' mean held-out return (``heldout.json``), if the run has one."""
    report = _json(run / "heldout.json")
    after = report.get("after") if isinstance(report, dict) else None
    interval = after.get("interval") if isinstance(after, dict) else None
    return _number(interval.get("mean")) if isinstance(interval, dict) else None


def language_heldout(run: Path) -> float | None:
    """The final policies' mean reward on the test split (``langmarl eval``), if measured."""
    result = _json(run / "evals" / "test_compare.json")
    final = result.get("final") if isinstance(result, dict) else None
    return _number(final.get("avg_reward")) if isinstance(final, dict) else None
