"""Plots of a run's curves, for every space: ``plot_run(run_dir)`` writes one PNG.

Names load lazily, and matplotlib only when a figure is drawn (the ``plot`` extra).
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "plot_run": "langmarl.plots.api",
    "run_series": "langmarl.plots.api",
    "detect_kind": "langmarl.plots.api",
    "resolve_run": "langmarl.plots.api",
    "KINDS": "langmarl.plots.api",
    "RunPlot": "langmarl.plots.series",
    "Panel": "langmarl.plots.series",
    "Series": "langmarl.plots.series",
    "RunKind": "langmarl.plots.series",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.plots.api import KINDS, detect_kind, plot_run, resolve_run, run_series
    from langmarl.plots.series import Panel, RunKind, RunPlot, Series
