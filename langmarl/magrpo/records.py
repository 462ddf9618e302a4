"""Reading a weight-space run's own files as plain JSON (never torch): what the dashboard
shows of MAGRPO, IAC, MAAC and PARL GRPO runs, through the reader their kind names
(:attr:`langmarl.store.kinds.RunKindSpec.reader`).

::

    checkpoints/step-NNNNNN/   complete once trainer_state.json is written (last)
    eval.jsonl                 the greedy evaluations during training
    heldout.json               the held-out report: before/after intervals and samples
    parl_curves.json           PARL GRPO: per step the means of the PARL terms, per episode rows
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langmarl.core.files import read_jsonl

STATE_FILE = "trainer_state.json"
"""Written last into every complete checkpoint (both weight-space checkpoint layouts)."""
EVAL_FILE = "eval.jsonl"
HELDOUT_FILE = "heldout.json"
CURVES_FILE = "parl_curves.json"
REPORT_PARTS = ("before", "after")


def _json(path: Path) -> Any:
    """``None`` if missing, torn or not UTF-8: a view shows what is there."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class WeightRunFiles:
    """The files of the weight-space run in ``path``.

    Args:
        path: The run directory.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def checkpoints(self) -> list[dict[str, Any]]:
        """Complete checkpoints, oldest first: name, step, trainer state, files."""
        found = []
        for folder in sorted((self.path / "checkpoints").glob("step-*")):
            state = _json(folder / STATE_FILE)
            if not isinstance(state, dict):  # still being written, or torn
                continue
            found.append({
                "name": folder.name, "step": int(folder.name.removeprefix("step-")),
                "state": state,
                "files": sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                                if p.is_file()),
            })  # fmt: skip
        return found

    def heldout(self) -> dict[str, Any] | None:
        """The held-out report, if the run wrote one."""
        report = _json(self.path / HELDOUT_FILE)
        return report if isinstance(report, dict) else None

    def heldout_summary(self) -> dict[str, Any] | None:
        """The held-out report's task and, before and after training, label, interval and
        returns (its completions: :meth:`samples`)."""
        report = self.heldout()
        if report is None:
            return None
        summary: dict[str, Any] = {"task": report.get("task")}
        for part in REPORT_PARTS:
            score = report.get(part) or {}
            summary[part] = {k: score.get(k) for k in ("label", "interval", "returns")}
        return summary

    def samples(self) -> dict[str, list[Any]]:
        """The completions the held-out report keeps, before and after training."""
        report = self.heldout() or {}
        return {part: (report.get(part) or {}).get("samples", []) for part in REPORT_PARTS}

    def evaluations(self) -> list[dict[str, Any]]:
        """The evaluations during training, one row per evaluation."""
        return [r for r in read_jsonl(self.path / EVAL_FILE) if isinstance(r, dict)]

    def curves(self) -> dict[str, Any] | None:
        """PARL GRPO's curves document (``curve`` and ``episodes``), if written."""
        document = _json(self.path / CURVES_FILE)
        return document if isinstance(document, dict) else None
