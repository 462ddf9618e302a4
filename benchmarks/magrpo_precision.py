"""MAGRPO's sampling precision decided by evidence (issue 25, item 5).

For each seed, the weight-space quickstart (``configs/magrpo/quickstart.json``: two embedded
SmolLM2-135M agents, LoRA, 16 steps, the poster task) trained once per sampling precision
(``trainer.sampling_precision``: ``fp32`` samples from the trained model, ``bf16`` / ``int8``
from a copy refreshed before every rollout), one run after the other through the real
command, alternating precisions within each seed so load drift hits all alike. Each run ends
with the held-out reward of the trained agents (greedy, the fp32 model, 20 topics).

Prints one row per run (held-out after, mean seconds per training step, wall time, load),
then per precision the mean held-out reward with its 95% t interval over seeds, the mean
step time, and against ``fp32`` the paired difference per seed with its 95% t interval and
the speed ratio. The rule the issue sets: a faster precision becomes the default when its
held-out mean is within the seeds' noise — here, when the paired difference's interval
contains 0. Results are kept in ``--out``/results.json after every run, so a stopped
invocation continues where it stopped.

    .venv/bin/python benchmarks/magrpo_precision.py --seeds 0 1 2 3 4 5 6 7 8 9

``--knob update_precision --precisions fp32,bf16`` makes the same comparison for the update's
arithmetic (issue 37: bf16 autocast of the forward and backward passes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from machine_load import print_machine  # beside this script

ROOT = Path(__file__).resolve().parent.parent
LANGMARL = Path(sys.executable).parent / "langmarl"


def train(seed: int, precision: str, steps: int, out: Path, knob: str) -> dict[str, Any]:
    run_dir = out / f"{precision}-seed{seed}"
    command = [
        str(LANGMARL), "magrpo", "train", "configs/magrpo/quickstart.json", "--no-plot",
        "--set", f"runs_dir={run_dir.parent}", "--set", f"run_id={run_dir.name}",
        "--set", f"seed={seed}",
        "--set", f"trainer.max_steps={steps}", "--set", f"trainer.{knob}={precision}",
    ]  # fmt: skip
    load_before, began = os.getloadavg()[0], time.perf_counter()
    with (out / f"{precision}-seed{seed}.log").open("w") as log:
        done = subprocess.run(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        sys.exit(f"{precision} seed {seed} failed (exit {done.returncode}): see {log.name}")
    report = json.loads((run_dir / "heldout.json").read_text())
    steps_run = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return {
        "seed": seed, "precision": precision,
        "after": statistics.mean(report["after"]["returns"]),
        "before": statistics.mean(report["before"]["returns"]),
        "step_seconds": statistics.mean(m["step_seconds"] for m in steps_run),
        "wall_seconds": round(time.perf_counter() - began, 1),
        "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }  # fmt: skip


def interval_text(values: list[float]) -> str:
    from langmarl.core.intervals import bounds_text, score_interval

    found = score_interval(values, "t")
    return f"{found.mean:.3f} {bounds_text(found)}"


def summary(results: list[dict[str, Any]], precisions: list[str]) -> None:
    by = {p: {r["seed"]: r for r in results if r["precision"] == p} for p in precisions}
    base = by[precisions[0]]
    print(f"\n| precision | held-out after (mean, 95% CI over seeds) | s/step | vs "
          f"{precisions[0]}: paired difference (95% CI) | speed |")  # fmt: skip
    print("|---|---|---|---|---|")
    for precision in precisions:
        runs = by[precision]
        seeds = sorted(set(runs) & set(base))
        step = statistics.mean(r["step_seconds"] for r in runs.values())
        base_step = statistics.mean(base[s]["step_seconds"] for s in seeds)
        diffs = [runs[s]["after"] - base[s]["after"] for s in seeds]
        paired = interval_text(diffs) if precision != precisions[0] and len(diffs) > 1 else "-"
        print(f"| {precision} | {interval_text([r['after'] for r in runs.values()])} "
              f"(n={len(runs)}) | {step:.2f} | {paired} | {base_step / step:.2f}x |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--precisions", default="fp32,bf16,int8")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument(
        "--knob",
        default="sampling_precision",
        choices=["sampling_precision", "update_precision"],
        help="The trainer setting the precisions are values of (issue 37: update_precision).",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "magrpo_precision")
    args = parser.parse_args()
    precisions = args.precisions.split(",")
    args.out.mkdir(parents=True, exist_ok=True)
    saved = args.out / "results.json"
    results: list[dict[str, Any]] = json.loads(saved.read_text()) if saved.exists() else []
    print(f"MAGRPO quickstart, {args.steps} steps, seeds {args.seeds}, {args.knob} {precisions}; "
          f"load average {os.getloadavg()}", flush=True)  # fmt: skip
    print("| seed | precision | held-out after | s/step | wall | load before-after |")
    print("|---|---|---|---|---|---|", flush=True)
    for seed in args.seeds:
        order = precisions if seed % 2 == 0 else precisions[::-1]  # alternate who goes first
        for precision in order:
            done = [r for r in results if (r["seed"], r["precision"]) == (seed, precision)]
            row = done[0] if done else train(seed, precision, args.steps, args.out, args.knob)
            if not done:
                results.append(row)
                saved.write_text(json.dumps(results, indent=1))
            print(f"| {seed} | {precision} | {row['after']:.3f} | {row['step_seconds']:.2f} | "
                  f"{row['wall_seconds']:.0f} s | {row['load'][0]}-{row['load'][1]} |",
                  flush=True)  # fmt: skip
    summary(results, precisions)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    print_machine()
    main()
