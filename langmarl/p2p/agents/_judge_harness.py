"""Runs an LLM-written ``judge_fn`` INSIDE the sandbox (see :mod:`langmarl.p2p.agents.judge`).

Reads ``judge_fn.py``, ``trajectory.json`` and ``summary.json`` from the working directory and
prints one JSON line: ``{"ok": bool, "score": float|null, "reason": str, "error": str|null}``.
"""

import json
import math
import traceback

import numpy as np


def main() -> dict:
    namespace: dict = {"__name__": "judge", "np": np, "numpy": np, "math": math}
    try:
        with open("judge_fn.py", encoding="utf-8") as handle:
            exec(compile(handle.read(), "judge_fn.py", "exec"), namespace)
        with open("trajectory.json", encoding="utf-8") as handle:
            trajectory = json.load(handle)
        with open("summary.json", encoding="utf-8") as handle:
            summary = json.load(handle)
        result = namespace["judge_fn"](trajectory, summary)
    except Exception as exc:
        last = traceback.extract_tb(exc.__traceback__)[-1]
        return {"ok": False, "error": f"{type(exc).__name__}: {exc} (line {last.lineno})"}
    if isinstance(result, dict):
        score, reason = result.get("score"), str(result.get("reason", ""))
    else:
        score, reason = result, ""
    if not isinstance(score, (int, float, str)):
        return {"ok": False, "error": f"judge_fn returned score {score!r}, not a number"}
    try:
        score = float(score)
    except (TypeError, ValueError):
        return {"ok": False, "error": f"judge_fn returned score {score!r}, not a number"}
    if not math.isfinite(score):
        return {"ok": False, "error": f"judge_fn returned a non-finite score {score}"}
    return {"ok": True, "score": min(1.0, max(0.0, score)), "reason": reason[:500], "error": None}


if __name__ == "__main__":
    print(json.dumps(main()))
