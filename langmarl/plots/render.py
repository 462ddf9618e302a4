"""Draw a :class:`~langmarl.plots.series.RunPlot` into one PNG with matplotlib.

matplotlib is imported here only, on first use. The figure is built with the object API
(``matplotlib.figure.Figure``, rendered by Agg) rather than ``pyplot``: no window, no global
backend switch, so plotting from a notebook or a server leaves the caller's matplotlib alone.
"""

from __future__ import annotations

import io
import math
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import MissingDependencyError
from langmarl.core.files import atomic_write_bytes
from langmarl.plots.series import Panel, RunPlot, Series

if TYPE_CHECKING:
    from matplotlib.axes import Axes

PANEL_SIZE = (6.4, 3.4)
"""Inches per subplot (width, height); at :data:`DPI` a panel is 640 x 340 pixels."""
DPI = 100
INTEGER_AXES = ("iteration", "step")
"""X labels whose ticks are whole numbers."""
STYLES: dict[str, dict[str, Any]] = {
    "line": {"linewidth": 1.8},
    "faint": {"linewidth": 1.0, "alpha": 0.35},
    "dashed": {"linewidth": 1.2, "linestyle": "--"},
    "markers": {"linestyle": "none", "marker": "D", "markersize": 6},
}


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("matplotlib", "plot", "Plotting a run") from None
    return Figure


def _draw_series(axes: Axes, series: Series, color: str | None) -> None:
    style = dict(STYLES[series.style])
    if len(series.x) <= 30 and series.style != "markers":
        style.setdefault("marker", "o")  # few points: show each one (one point has no line)
        style.setdefault("markersize", 4)
    axes.plot(series.x, series.y, label=series.label, color=color, **style)


def draw_panel(axes: Axes, panel: Panel) -> None:
    """One subplot: every non-empty series, reference lines, labels and a legend."""
    from matplotlib.ticker import MaxNLocator

    colors: dict[str, str] = {}  # group (or label) -> the next colour of the cycle
    for series in panel.series:
        if series.x:
            key = series.group or series.label
            color = colors.setdefault(key, f"C{len(colors) % 10}")
            _draw_series(axes, series, color)
    for label, value in panel.hlines.items():
        axes.axhline(value, color="grey", linestyle=":", linewidth=1.2, label=label)
    axes.set_title(panel.title, fontsize=11)
    axes.set_xlabel(panel.xlabel)
    axes.set_ylabel(panel.ylabel)
    if panel.xlabel in INTEGER_AXES:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    xs = {x for series in panel.series for x in series.x}
    if len(xs) == 1:  # one position: centre it instead of a hair-thin axis around it
        (x,) = xs
        axes.set_xlim(x - 1, x + 1)
    axes.grid(True, alpha=0.3)
    axes.legend(fontsize=8, loc="best")


def render(plot: RunPlot, output: Path) -> Path:
    """Write ``plot`` as a PNG to ``output`` (atomically, parent directories created);
    returns ``output``.

    Panels go in one column up to two of them, else in two columns; the run's title is on
    top and its notes (skipped lines, too few points) under the panels.

    Raises:
        MissingDependencyError: if matplotlib is not installed (``pip install
            'langmarl[plot]'``).
    """
    figure_class = _figure_class()
    count = len(plot.panels)
    columns = 1 if count <= 2 else 2
    rows = math.ceil(count / columns)
    notes = [textwrap.fill(f"note: {note}", 110 * columns) for note in plot.notes]
    notes_height = 0.17 * sum(note.count("\n") + 1 for note in notes)
    size = (PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows + 0.6 + notes_height)
    figure = figure_class(figsize=size, dpi=DPI, layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    cells = [axes for row in grid for axes in row]
    for axes, panel in zip(cells, plot.panels, strict=False):
        draw_panel(axes, panel)
    for axes in cells[count:]:
        axes.set_visible(False)
    figure.suptitle(textwrap.fill(plot.title, 50 * columns), fontsize=13, fontweight="bold")
    if notes:
        figure.supxlabel("\n".join(notes), fontsize=8, color="darkred", ha="left", x=0.01)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(output, buffer.getvalue())  # a reader never sees half a PNG
    return output
