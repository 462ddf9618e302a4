"""Any kind of run from its ``metrics.jsonl`` alone: the kind's score per step (with its
running mean), then up to :data:`MAX_PANELS` other numeric series, one panel each.

This is how a kind registered without a plotter of its own
(:attr:`~langmarl.store.kinds.RunKindSpec.plot` left ``None``) is drawn.
"""

from __future__ import annotations

from langmarl.plots.files import RunFiles
from langmarl.plots.series import Panel, RunKind, RunPlot, column, number, smoothed
from langmarl.store.kinds import RunKindSpec

METRICS_FILE = "metrics.jsonl"
MAX_PANELS = 6
SKIPPED = frozenset({"step", "iteration", "time", "seconds", "step_seconds"})


def metrics_kind(spec: RunKindSpec) -> RunKind:
    """The plotter of ``spec``'s runs from their metrics stream."""

    def build(files: RunFiles) -> RunPlot:
        rows = files.jsonl(METRICS_FILE)
        unit = spec.unit
        main = column(rows, spec.score_key, "step", spec.score_key)
        panels = [Panel(f"{spec.score_key} per {unit}", spec.score_key, smoothed(main), unit)]
        keys = sorted({k for r in rows for k, v in r.items() if number(v) is not None})
        for key in [k for k in keys if k not in SKIPPED and k != spec.score_key][:MAX_PANELS]:
            panels.append(Panel(key, key, [column(rows, key, "step", key)], unit))
        return RunPlot(files.root, spec.name, spec.title or spec.name, panels)

    return RunKind(
        name=spec.name,
        expected=f"run.json of kind {spec.name} + {METRICS_FILE}",
        empty=f"{METRICS_FILE} has no {spec.unit} yet",
        detect=lambda run_dir: False,
        build=build,
    )
