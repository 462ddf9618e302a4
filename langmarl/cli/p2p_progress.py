"""Phase progress of a Prompt2Policy session, read from its directory while it runs.

The loop has no progress hooks, and needs none: every step it takes leaves a file (see
:mod:`langmarl.p2p.session.records`), so a thread polls the session directory and drives two
rich bars — iterations judged, and the current iteration's phase with PPO's timesteps::

    no iter_N yet                      writing the reward (LLM), or, while ``baseline/``
                                       trains, training the env's own reward (baseline)
    iter_N, no scalars yet             validating the reward, starting PPO
    scalars, no summary.json           training PPO           (timesteps done / total),
                                       or training K candidates (iter_N/candidates/)
    summary.json, no outcome.json      judging
    outcome.json                       revising the reward (LLM), or, after the last
                                       iteration (passed — by the check when the session
                                       has one — or max_iterations), analysing the session

Iterations are numbered from 1, as the ``iter_N`` directories and the report are.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from langmarl.cli.common import console

POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Phase:
    """Where a session is: its current iteration (0 before the first), a label, the
    timesteps trained out of ``total`` (None when not training) and iterations judged."""

    iteration: int
    label: str
    done: int = 0
    total: int | None = None
    judged: int = 0


def session_phase(session_dir: Path, max_iterations: int | None = None) -> Phase:
    """The phase a session's files show (module docstring)."""
    numbers = sorted(
        int(p.name.removeprefix("iter_"))
        for p in session_dir.glob("iter_*")
        if p.is_dir() and p.name.removeprefix("iter_").isdigit()
    )
    judged = sum((session_dir / f"iter_{n}" / "outcome.json").is_file() for n in numbers)
    if not numbers:
        baseline = session_dir / "baseline"
        scalars = list(baseline.rglob("scalars.jsonl"))
        if baseline.is_dir() and not (session_dir / "iter_1").exists():
            done = sum(_last_step(path) for path in scalars) // max(len(scalars), 1)
            total = _run_total(baseline)
            return Phase(0, "training the env's own reward (baseline)", done, total)
        return Phase(0, "writing the reward (LLM)")
    current = numbers[-1]
    it = session_dir / f"iter_{current}"
    if (it / "outcome.json").is_file():
        last = current == max_iterations or _passed(it)
        label = "analysing the session" if last else "revising the reward (LLM)"
        return Phase(current, label, judged=judged)
    if (it / "summary.json").is_file():
        return Phase(current, "judging", judged=judged)
    scalars = list(it.rglob("scalars.jsonl"))
    if not scalars:
        return Phase(current, "validating the reward, starting PPO", judged=judged)
    done = sum(_last_step(path) for path in scalars) // len(scalars)
    several = [p for p in (it / "candidates").glob("c_*") if p.is_dir()]
    label = f"training {len(several)} candidates" if several else "training PPO"
    return Phase(current, label, done, _total_timesteps(it) or _run_total(it), judged)


def _passed(it: Path) -> bool:
    """Whether iteration ``it`` passed: by its check when it has one, else its judgment."""
    try:
        check = json.loads((it / "outcome.json").read_text(encoding="utf-8")).get("check")
        if isinstance(check, dict):
            return check.get("passed") is True
        return json.loads((it / "judgment.json").read_text(encoding="utf-8"))["passed"] is True
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _run_total(run_dir: Path) -> int | None:
    """The total timesteps of the first run's ``config.json`` under ``run_dir``."""
    for config in sorted(run_dir.rglob("config.json")):
        total = _total_timesteps(config.parent)
        if total is not None:
            return total
    return None


def _last_step(path: Path) -> int:
    """The newest ``step`` of a scalars file that is being appended to."""
    last = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError, AttributeError):
            last = max(last, int(json.loads(line).get("step", 0)))
    return last


def _total_timesteps(it: Path) -> int | None:
    try:
        return int(json.loads((it / "config.json").read_text(encoding="utf-8"))["total_timesteps"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def session_progress(session_dir: Path, max_iterations: int, title: str = "") -> Iterator[None]:
    """Show the session's phase progress while the block runs the session."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = ("{task.description}", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=console) as progress:
        overall = progress.add_task(f"{title}iterations judged", total=max_iterations)
        phase = progress.add_task("starting", total=None)
        stop = threading.Event()

        def poll() -> None:
            while not stop.wait(POLL_SECONDS):
                with contextlib.suppress(OSError):
                    now = session_phase(session_dir, max_iterations)
                    label = f"iteration {now.iteration}/{max_iterations} · {now.label}"
                    progress.update(overall, completed=now.judged)
                    progress.update(phase, description=label, completed=now.done, total=now.total)

        watcher = threading.Thread(target=poll, name="p2p-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
