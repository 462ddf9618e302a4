"""Runs a check INSIDE the sandbox (see :mod:`langmarl.p2p.design.checks`).

Reads ``check.py`` and ``episodes.json`` (a list of ``{"trajectory", "summary"}``) from the
working directory, calls ``check(trajectory, summary)`` on every episode and prints one JSON
line: ``{"ok": true, "scores": [...]}``, or ``{"ok": false, "error": "..."}`` naming the
first episode whose score is not a real number in [0, 1] or whose call raised.
"""

import json
import math
import traceback

import numpy as np


def _problem(value: object) -> str | None:
    """Why ``value`` is not a score ([0, 1], a real number), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return f"returned {value!r} ({type(value).__name__}), not a number"
    if not math.isfinite(float(value)):
        return f"returned {float(value)}, not a finite number"
    if not 0.0 <= float(value) <= 1.0:
        return f"returned {float(value):.6g}, outside [0, 1]"
    return None


def main() -> dict:
    namespace: dict = {"__name__": "check", "np": np, "numpy": np, "math": math}
    try:
        with open("check.py", encoding="utf-8") as handle:
            exec(compile(handle.read(), "check.py", "exec"), namespace)
        with open("episodes.json", encoding="utf-8") as handle:
            episodes = json.load(handle)
    except BaseException as exc:  # SystemExit too: the harness, not the check, prints last
        return {"ok": False, "error": f"loading the check failed: {type(exc).__name__}: {exc}"}
    scores = []
    for index, episode in enumerate(episodes):
        try:
            value = namespace["check"](episode["trajectory"], episode["summary"])
        except BaseException as exc:
            last = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"line {last.lineno}" if last.filename == "check.py" else last.filename
            return {"ok": False, "error": f"episode {index}: {type(exc).__name__}: {exc} ({where})"}
        problem = _problem(value)
        if problem:
            return {"ok": False, "error": f"episode {index}: check {problem}"}
        scores.append(float(value))
    return {"ok": True, "scores": scores}


if __name__ == "__main__":
    print(json.dumps(main()))
