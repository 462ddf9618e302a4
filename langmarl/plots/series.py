"""What a run plot shows, as plain data: series, panels, the whole figure (no matplotlib).

Every kind of run turns its files into a :class:`RunPlot`; :mod:`langmarl.plots.render`
draws it. Tests assert on these records (numbers), not on pixels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from langmarl.plots.files import RunFiles

Style = Literal["line", "faint", "dashed", "markers"]
"""``line``: the main curve; ``faint``: raw values under a running mean; ``dashed``: a
secondary curve (a bound, a weight); ``markers``: separate points (evaluations)."""


@dataclass(frozen=True)
class Series:
    """One curve: ``y[i]`` at ``x[i]``.

    Attributes:
        label: Legend text.
        x: Positions (iterations, steps, environment steps).
        y: Values, as many as ``x``.
        style: How it is drawn (see :data:`Style`).
        group: Series with the same group share a colour (a run's curve and its evaluations).
    """

    label: str
    x: list[float]
    y: list[float]
    style: Style = "line"
    group: str | None = None


@dataclass
class Panel:
    """One subplot: a family of series on one y axis.

    Attributes:
        title: Subplot title.
        ylabel: Y-axis label.
        series: The curves (empty ones are not drawn).
        xlabel: X-axis label (``iteration``/``step`` axes get integer ticks).
        hlines: Horizontal reference lines, ``label -> y`` (a pass threshold).
    """

    title: str
    ylabel: str
    series: list[Series]
    xlabel: str = "iteration"
    hlines: dict[str, float] = field(default_factory=dict)

    @property
    def points(self) -> int:
        """The length of the longest series."""
        return max((len(s.x) for s in self.series), default=0)


@dataclass
class RunPlot:
    """Everything drawn for one run.

    Attributes:
        run_dir: The run's directory.
        kind: The detected kind (a name in ``langmarl.plots.KINDS``).
        label: Human-readable kind for the title (``weight space (MAGRPO)``).
        panels: Subplots with at least one point, in order; the first holds the main curve.
        notes: Warnings shown under the figure (and logged): skipped lines, too few points.
    """

    run_dir: Path
    kind: str
    label: str
    panels: list[Panel]
    notes: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        """``<run name> — <kind label>``."""
        return f"{self.run_dir.resolve().name} — {self.label}"

    def series(self, panel_title: str) -> dict[str, Series]:
        """The series of the panel titled ``panel_title``, by label.

        Raises:
            KeyError: naming the panels there are, if there is no such panel.
        """
        for panel in self.panels:
            if panel.title == panel_title:
                return {s.label: s for s in panel.series}
        raise KeyError(f"no panel {panel_title!r}; panels: {[p.title for p in self.panels]}")


@dataclass(frozen=True)
class RunKind:
    """One row of the dispatch table: how to recognise a kind of run and what to plot.

    Attributes:
        name: Short id (``language``, ``weight``, ...).
        expected: The files that mark this kind, for the error on an unknown directory.
        empty: Why there may be nothing to plot yet, for the "no metrics yet" error.
        detect: ``run_dir -> bool``; cheap (file existence, one small JSON read at most).
        build: Reads the run and returns its plot (panels may still be empty).
    """

    name: str
    expected: str
    empty: str
    detect: Callable[[Path], bool]
    build: Callable[[RunFiles], RunPlot]


def number(value: Any) -> float | None:
    """``value`` as a finite float, or ``None`` (missing, text, NaN, infinite; bools count)."""
    if isinstance(value, bool | int | float) and math.isfinite(value):
        return float(value)
    return None


def column(
    records: Iterable[Mapping[str, Any]], key: str, x_key: str, label: str, style: Style = "line"
) -> Series:
    """The series ``record[key]`` against ``record[x_key]``, skipping records where either
    is missing or not a number."""
    xs, ys = [], []
    for record in records:
        x, y = number(record.get(x_key)), number(record.get(key))
        if x is not None and y is not None:
            xs.append(x)
            ys.append(y)
    return Series(label, xs, ys, style)


def suffix_columns(
    records: Sequence[Mapping[str, Any]], suffix: str, x_key: str, style: Style = "line"
) -> list[Series]:
    """One series per key ``<prefix>/<suffix>`` (``agent-0/kl``, ``agent-1/kl``), labelled by
    the prefix, in sorted order."""
    prefixes = sorted(
        {k[: -len(suffix) - 1] for r in records for k in r if k.endswith(f"/{suffix}")}
    )
    return [column(records, f"{p}/{suffix}", x_key, p, style) for p in prefixes]


def running_mean(values: list[float], window: int) -> list[float]:
    """Trailing mean over the last ``window`` values (fewer at the start).

    Args:
        values: The raw series, length ``n``.
        window: Number of values averaged (>= 1).

    Returns:
        ``n`` means; ``out[i] = mean(values[max(0, i - window + 1) : i + 1])``.
    """
    window = max(1, window)
    out, total = [], 0.0
    for index, value in enumerate(values):
        total += value
        if index >= window:
            total -= values[index - window]
        out.append(total / min(index + 1, window))
    return out


def smoothing_window(n: int) -> int:
    """The running-mean window for ``n`` points: a tenth of them, between 2 and 25
    (1, i.e. no smoothing, below 4 points)."""
    return 1 if n < 4 else min(25, max(2, n // 10))


def smoothed(raw: Series, unit: str = "steps") -> list[Series]:
    """``raw`` drawn faint under its running mean (in the same colour), when it has enough
    points to need one (see :func:`smoothing_window`); else ``[raw]`` unchanged."""
    window = smoothing_window(len(raw.y))
    if window == 1:
        return [raw]
    group = raw.group or raw.label  # one colour: the faint values and their mean
    mean = running_mean(raw.y, window)
    smooth = Series(f"running mean ({window} {unit})", raw.x, mean, "line", group)
    return [Series(raw.label, raw.x, raw.y, "faint", group), smooth]
