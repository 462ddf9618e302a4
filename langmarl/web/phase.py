"""What a language run is doing right now, in a few words, for the run page's header:
"iteration 2 · generating episodes (5/8)".

The trainer writes no phase record, so this is read from what it does write, newest first:

==============================  ===========================================================
the newest event                 phase
==============================  ===========================================================
none (no events yet)            starting: loading the trainer
none with an ``iteration``      scoring the starting policies (a pool run without a pool
                                yet), else starting
``iteration_end`` (i)           iteration i + 2 · starting (after the last: finishing)
any other of iteration i        by iteration i's events: ``gradient`` → updating policies,
                                ``evaluation`` → the critic evaluating episodes (k/n),
                                fewer ``episode`` events than planned → generating episodes
                                (k/n), all episodes in → scoring candidates (pool) or
                                evaluating episodes
==============================  ===========================================================

(``iteration_start`` is written only by the default logging callback, so the phase is
read from every event that names an iteration.)

Iterations are numbered from 1, as everywhere on the page. A run that is not running has
no phase (``None``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmarl.core.errors import LangmarlError
from langmarl.store.run import RunDir
from langmarl.web.pool import POOL_FILE


def _events(run: Path) -> list[dict[str, Any]]:
    try:
        return RunDir(run).events()
    except LangmarlError:
        return []


def _within(config: dict[str, Any], since: list[dict[str, Any]]) -> str:
    """The phase inside an iteration, from its events so far."""
    counts = {name: sum(e.get("event") == name for e in since)
              for name in ("episode", "evaluation", "gradient")}  # fmt: skip
    planned = config.get("trajectories_per_iteration")
    if counts["gradient"]:
        return "updating policies"
    if counts["evaluation"]:
        return f"evaluating episodes ({counts['evaluation']}/{counts['episode']})"
    if not isinstance(planned, int) or counts["episode"] < planned:
        return f"generating episodes ({counts['episode']}/{planned or '?'})"
    if config.get("search") == "pool":
        return "proposing and scoring candidates on the validation batch"
    return "evaluating episodes"


def _before_any(run: Path, config: dict[str, Any]) -> str:
    """The phase before the first event of an iteration."""
    first = int(config.get("start_iteration") or 0) + 1
    if config.get("search") == "pool" and not (run / POOL_FILE).is_file():
        return f"iteration {first} · scoring the starting policies on the validation batch"
    return f"iteration {first} · starting"


def current_phase(run: Path, status: str, config: dict[str, Any] | None) -> str | None:
    """The phase of the language run in ``run`` (see the module docstring)."""
    if status not in ("running", "unknown"):
        return None
    config = config or {}
    events = _events(run)
    if not events:
        return "starting: loading the trainer"
    numbered = [e for e in events if isinstance(e.get("iteration"), int)]
    if not numbered:
        return _before_any(run, config)
    newest = numbered[-1]
    iteration = int(newest["iteration"])
    if newest.get("event") == "iteration_end":
        planned = int(config.get("start_iteration") or 0) + int(config.get("num_iterations") or 0)
        if iteration + 1 >= planned:
            return f"iteration {iteration + 1} done · finishing the run"
        return f"iteration {iteration + 2} · starting"
    ongoing = [e for e in numbered if e["iteration"] == iteration]
    return f"iteration {iteration + 1} · {_within(config, ongoing)}"
