"""`plot_run`: one PNG of a run's curves, whatever space the run comes from.

::

    kind  = the plotter run.json's kind names (langmarl.store.kinds), else
            first of KINDS whose detect(run_dir) is true    # else: error listing the files
    plot  = kind.build(RunFiles(run_dir))                    # pure data, tested directly
    drop empty series and panels; nothing left → "no metrics in RUN yet: …"
    one point only → a note; render(plot) → <run_dir>/curves.png

The order of :data:`KINDS` matters: a language-space PARL run has ``run.json`` and
``parl_curves.json``, and is a language run.
"""

from __future__ import annotations

import logging
from pathlib import Path

from langmarl.core.errors import ConfigError
from langmarl.core.runs_dir import DEFAULT_RUNS_DIR
from langmarl.plots import language, parl, reward, weight
from langmarl.plots.files import RunFiles
from langmarl.plots.metrics import metrics_kind
from langmarl.plots.series import RunKind, RunPlot
from langmarl.store import kinds

log = logging.getLogger("langmarl.plots")

KINDS: tuple[RunKind, ...] = (
    language.KIND,
    parl.KIND,
    weight.KIND,
    reward.SESSION_KIND,
    reward.RUN_KIND,
)
"""Detector → plotter, tried in order, for runs without a recorded kind (older layouts); a
run whose ``run.json`` records its kind is drawn by the plotter its kind names
(:attr:`~langmarl.store.kinds.RunKindSpec.plot`, else :func:`metrics_kind`)."""


RUN_PARENTS = (DEFAULT_RUNS_DIR, "experiments")
"""Where a bare run id is looked up: the runs root every space writes to by default, then
``experiments/``, where language runs went before it (older runs)."""

DEFAULT_OUTPUT = "curves.png"


def resolve_run(run: str | Path, runs_dir: str | Path | None = None) -> Path:
    """The directory of ``run``: a path to a run directory, or a run id under ``runs_dir``
    (default: ``runs/``, then ``experiments/``), as ``langmarl runs --runs-dir`` lists them.

    Raises:
        ConfigError: naming where it looked and the runs found there.
    """
    path = Path(run)
    if path.is_dir():
        return path
    parents = [Path(runs_dir)] if runs_dir is not None else [Path(p) for p in RUN_PARENTS]
    name = str(run)
    for parent in parents:
        if "/" not in name and (parent / name).is_dir():
            return parent / name
    found = sorted(p.name for parent in parents if parent.is_dir() for p in parent.iterdir())
    listing = _listing(found, 20, "none")
    where = " or ".join(f"{p}/" for p in parents)
    raise ConfigError(
        f"No run {name!r}: not a directory, nor a run id in {where} (runs there: "
        f"{listing}). Pass a run directory, or --runs-dir with the directory holding the run."
    )


def _listing(names: list[str], limit: int, empty: str) -> str:
    """``a, b, c …`` (at most ``limit`` names), or ``empty``."""
    if not names:
        return empty
    return ", ".join(names[:limit]) + (" …" if len(names) > limit else "")


def detect_kind(run_dir: str | Path) -> RunKind:
    """The plotter of the kind ``run.json`` records, else the first of :data:`KINDS` that
    recognises ``run_dir``.

    Raises:
        ConfigError: if ``run_dir`` is not a directory, or no kind recognises it (the message
            lists its files and the files each kind expects).
    """
    path = Path(run_dir)
    if not path.is_dir():
        raise ConfigError(f"No run directory {str(path)!r}: give the directory of a run.")
    recorded = RunFiles(path).json("run.json")
    spec = kinds.find(recorded.get("kind")) if isinstance(recorded, dict) else None
    if spec is not None:
        return metrics_kind(spec) if spec.plot is None else kinds.load(spec.plot)
    for kind in KINDS:
        if kind.detect(path):
            return kind
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
    held = _listing(names, 15, "nothing")
    expected = "\n".join(f"  {kind.name}: {kind.expected}" for kind in KINDS)
    raise ConfigError(
        f"{path} is not a run directory langmarl can plot (it holds: {held}). "
        f"Expected one of:\n{expected}"
    )


def run_series(run_dir: str | Path) -> RunPlot:
    """What :func:`plot_run` draws for ``run_dir``: its kind, panels and notes (no
    matplotlib). Empty series and panels are dropped.

    Raises:
        ConfigError: if the directory is not a run (see :func:`detect_kind`), or it has
            nothing to plot yet (``no metrics in RUN yet: …``).
    """
    kind = detect_kind(run_dir)
    files = RunFiles(run_dir)
    plot = kind.build(files)
    for panel in plot.panels:
        panel.series = [s for s in panel.series if s.x]
    plot.panels = [p for p in plot.panels if p.points]
    if not plot.panels:
        skipped = f" ({'; '.join(files.notes)})" if files.notes else ""
        raise ConfigError(f"no metrics in {run_dir} yet: {kind.empty}{skipped}")
    main = plot.panels[0]
    if main.points == 1:
        files.note(f"only one {main.xlabel} so far: drawn as single points, no curve yet")
    plot.notes = [*plot.notes, *files.notes]
    return plot


def plot_run(run_dir: str | Path, output: str | Path | None = None) -> Path:
    """Write a PNG of the run's curves and return its path.

    Works for every space: language (``langmarl train``), weight (MAGRPO/IAC/MAAC), PARL's
    orchestrator GRPO and reward space (Prompt2Policy sessions and single runs); the kind is
    detected from the files in ``run_dir``.

    Args:
        run_dir: The run's directory.
        output: The PNG to write (default: ``<run_dir>/curves.png``).

    Returns:
        The path of the PNG.

    Raises:
        ConfigError: if ``run_dir`` is not a run or has no metrics yet.
        MissingDependencyError: if matplotlib is missing (``pip install 'langmarl[plot]'``).
    """
    from langmarl.plots.render import render

    plot = run_series(run_dir)
    target = Path(output) if output is not None else Path(run_dir) / DEFAULT_OUTPUT
    render(plot, target)
    log.debug("%s run %s: wrote %s", plot.kind, run_dir, target)  # the caller says where
    return target
