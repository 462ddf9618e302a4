"""Learning you can see (issue 11): weight-space MAGRPO on the poster task, and the quickstart.

``weights``: trains ``configs/magrpo/poster.json`` (two SmolLM2-135M agents, LoRA) once per
seed, the seeds side by side (one torch thread each on a 2-core machine), through the real
command ``langmarl magrpo train``. Prints per seed the wall time, the mean reward of the first
and the last 10 steps, and the held-out reward (greedy, n=30) of the untrained and the trained
agents; writes ``docs/magrpo_poster_learning.{png,json}``.

``quickstart``: runs ``python3 dev.py quickstart --set seed=S`` once per seed, one
after the other, and prints its wall time and the closing ``Held-out reward`` line.

    .venv/bin/python benchmarks/learning.py weights --seeds 0 1
    .venv/bin/python benchmarks/learning.py quickstart --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from machine_load import print_machine  # beside this script

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LANGMARL = Path(sys.executable).parent / "langmarl"
WINDOW = 10


def load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def read_rewards(run_dir: Path) -> list[float]:
    lines = (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["reward_mean"] for line in lines if line.strip()]


def weights(seeds: list[int], config: str, out: Path, threads: int) -> None:
    print(f"{config}, seeds {seeds}, load average before: {load_average()}", flush=True)
    started, procs = {}, {}
    for seed in seeds:
        run_dir = out / f"seed{seed}"
        command = [
            str(LANGMARL), "magrpo", "train", config, "--no-plot",
            "--set", f"runs_dir={run_dir.parent}", "--set", f"run_id={run_dir.name}",
            "--set", f"seed={seed}",
            "--set", f"trainer.num_threads={threads}",
        ]  # fmt: skip
        log = (out / f"seed{seed}.log").open("w")
        started[seed] = time.perf_counter()
        procs[seed] = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    loads, summary, seconds = [], {}, {}
    while len(seconds) < len(procs):
        time.sleep(5)
        loads.append(os.getloadavg()[0])
        for seed, proc in procs.items():
            if seed not in seconds and proc.poll() is not None:
                seconds[seed] = time.perf_counter() - started[seed]
    for seed, proc in procs.items():
        if proc.returncode != 0:
            sys.exit(f"seed {seed} failed (exit {proc.returncode}): see {out}/seed{seed}.log")
        run_dir = out / f"seed{seed}"
        rewards = read_rewards(run_dir)
        heldout = json.loads((run_dir / "heldout.json").read_text(encoding="utf-8"))
        summary[seed] = {
            "wall_seconds": round(seconds[seed], 1),
            "steps": len(rewards),
            "first10": mean(rewards[:WINDOW]),
            "last10": mean(rewards[-WINDOW:]),
            "heldout_before": heldout["before"]["interval"],
            "heldout_after": heldout["after"]["interval"],
            "rewards": rewards,
        }
    report(summary, loads)
    write_outputs(summary, loads, config)


def mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4)


def report(summary: dict[int, dict], loads: list[float]) -> None:
    print(f"load average (1 min) during the runs: {min(loads):.2f}–{max(loads):.2f}")
    print("| seed | steps | wall | first 10 | last 10 | gain | held-out untrained → trained (n) |")
    print("|---|---|---|---|---|---|---|")
    for seed, row in summary.items():
        before, after = row["heldout_before"], row["heldout_after"]
        print(
            f"| {seed} | {row['steps']} | {row['wall_seconds'] / 60:.1f} min | "
            f"{row['first10']:.3f} | {row['last10']:.3f} | "
            f"{row['last10'] - row['first10']:+.3f} | "
            f"{before['mean']:.3f} → {after['mean']:.3f} ({after['n']}) |"
        )


def write_outputs(summary: dict[int, dict], loads: list[float], config: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    record = {"config": config, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    record["load_average_1min"] = [round(min(loads), 2), round(max(loads), 2)]
    record["seeds"] = summary
    (DOCS / "magrpo_poster_learning.json").write_text(json.dumps(record, indent=1) + "\n")
    figure, axis = plt.subplots(figsize=(7, 3.8))
    for seed, row in summary.items():
        rewards = row["rewards"]
        steps = range(1, len(rewards) + 1)
        line = axis.plot(steps, rewards, "o", alpha=0.35, markersize=3)[0]
        smooth = [mean(rewards[max(0, i - 4) : i + 1]) for i in range(len(rewards))]
        axis.plot(steps, smooth, "-", color=line.get_color(), label=f"seed {seed} (mean of 5)")
        after = row["heldout_after"]["mean"]
        axis.axhline(after, color=line.get_color(), linestyle=":", linewidth=1)
    before = next(iter(summary.values()))["heldout_before"]["mean"]
    axis.axhline(before, color="grey", linestyle="--", linewidth=1, label="held-out, untrained")
    axis.set(xlabel="MAGRPO step", ylabel="joint reward", ylim=(0, 1.02))
    axis.set_title("poster task, 2 × SmolLM2-135M + LoRA (dotted: held-out after training)")
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(DOCS / "magrpo_poster_learning.png", dpi=110)
    print(f"wrote {DOCS / 'magrpo_poster_learning.png'} and .json")


def quickstart(seeds: list[int]) -> None:
    for seed in seeds:
        print(f"seed {seed}: load average before {load_average()}", flush=True)
        began = time.perf_counter()
        result = subprocess.run(
            ["python3", "dev.py", "quickstart", "--set", f"seed={seed}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - began
        lines = [line for line in result.stdout.splitlines() if line.strip()]
        last = lines[-1] if lines else result.stderr[-300:]
        print(f"seed {seed}: exit {result.returncode}, {seconds / 60:.1f} min, load "
              f"{load_average()}\n  {last}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["weights", "quickstart"])
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument("--config", default="configs/magrpo/poster.json")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per seed")
    parser.add_argument("--out", type=Path, default=Path("/tmp/langmarl-learning"))
    args = parser.parse_args()
    if args.what == "weights":
        args.out.mkdir(parents=True, exist_ok=True)
        weights(args.seeds or [0, 1], args.config, args.out, args.threads)
    else:
        quickstart(args.seeds or [0, 1, 2])


if __name__ == "__main__":
    print_machine()
    main()
