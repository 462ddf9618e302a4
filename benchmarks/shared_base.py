"""LoRA agents that share their model's frozen base against agents that each load their own.

Runs the README's quickstart (two embedded SmolLM2 agents, LoRA, ``w16`` sampling) twice,
each in its own process on one torch thread, one after the other:

* ``shared``: ``models: ["smollm2", "smollm2"]``. One model is loaded, and both agents train
  adapters over its frozen tensors and sample through one packed fp16 copy of it
  (``magrpo.policy.build_agents``, ``magrpo.sampler``);
* ``own``: ``models: ["smollm2", <the same weights by their path>]``. The two names differ,
  so each agent loads and packs its own copy, as every agent did before.

For each it prints wall time, CPU-seconds and peak RSS (``os.wait4``), the rollout and
update seconds (``metrics.jsonl``), and whether every other metric of every step is the same
in both runs.

Run: ``.venv/bin/python benchmarks/shared_base.py [--steps 5]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "magrpo" / "quickstart.json"
TIMINGS = ("rollout_seconds", "update_seconds", "step_seconds")


def train(models: list[str], steps: int, runs_dir: Path) -> tuple[dict[str, float], list[dict]]:
    """Train the quickstart with ``models`` in a process; its figures and its metrics rows."""
    settings = {"models": json.dumps(models), "trainer.max_steps": str(steps),
                "heldout": "false", "runs_dir": str(runs_dir)}  # fmt: skip
    argv = [sys.executable, "-m", "langmarl", "magrpo", "train", str(CONFIG), "--no-plot"]
    argv += [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]
    env = {**os.environ, "LANGMARL_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{models}: training failed:\n{child.stderr.read().decode()[-3000:]}")
    rows = [json.loads(line) for line in (runs_dir / "quickstart" / "metrics.jsonl").open()]
    figures = {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_gb": usage.ru_maxrss / 2**20,  # KiB on Linux
        **{key: sum(row[key] for row in rows) for key in TIMINGS[:2]},
    }
    return figures, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="training steps per run")
    args = parser.parse_args()

    from langmarl.core.machine import describe
    from langmarl.magrpo.policy import embedded_model_dir

    print(describe(), flush=True)
    sides = {"shared": ["smollm2", "smollm2"], "own": ["smollm2", embedded_model_dir()]}
    results = {}
    with tempfile.TemporaryDirectory(prefix="langmarl-shared-base-") as tmp:
        for name, models in sides.items():
            results[name] = train(models, args.steps, Path(tmp) / name)
            figures = results[name][0]
            print(
                f"{name:>6}: {figures['wall_s']:.1f} s wall, {figures['cpu_s']:.1f} CPU-s, "
                f"peak RSS {figures['peak_rss_gb']:.2f} GB, rollout "
                f"{figures['rollout_seconds']:.1f} s, update {figures['update_seconds']:.1f} s",
                flush=True,
            )
    rows = [[{k: v for k, v in row.items() if k not in TIMINGS} for row in results[name][1]]
            for name in sides]  # fmt: skip
    print(f"the same metrics at every step: {rows[0] == rows[1]} ({len(rows[0])} steps)")
    shared, own = results["shared"][0], results["own"][0]
    rss, cpu = shared["peak_rss_gb"] / own["peak_rss_gb"], shared["cpu_s"] / own["cpu_s"]
    print(f"shared/own: peak RSS {rss:.2f}x, CPU {cpu:.2f}x; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
