"""Does PARL's orchestrator learn to parallelize? `langmarl parl grpo` on a shipped config,
one run per seed, and the curves it writes.

For each seed (sequentially, one fresh process each, one torch thread): run
``langmarl parl grpo --config CONFIG --set seed=S --set runs_dir=RUNS --set run_id=seedS``,
sampling the load average every 30 s meanwhile; then read the run's ``parl_curves.json`` and
print the mean of the first k and the last k steps of total reward, r_perf, r_parallel,
sub-agents, critical steps, serial steps and speed-up. Writes the curves and summaries as
JSON and a plot (matplotlib, Agg) of every run.

``--control-seeds`` adds **untrained controls**: the same command with
``grpo.learning_rate=1e-12`` (the same code path, tasks in the same order for the same seed,
but updates of ~1e-12, so the orchestrator stays as it started). Their first-vs-last change
is what the task order and sampling noise alone produce.

``--reuse`` takes a run already recorded in ``OUT.json`` (same kind, seed and config) instead
of running it again, so a control can be added after the trained runs.

Usage::

    .venv/bin/python benchmarks/parl_learning.py --seeds 0 1
    .venv/bin/python benchmarks/parl_learning.py --seeds 0 1 --control-seeds 0 --reuse
    .venv/bin/python benchmarks/parl_learning.py --seeds 0 --steps 6 --k 2 --out /tmp/parl_try
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from machine_load import LoadSampler, print_machine  # noqa: E402

from langmarl.parl.curves import CURVES_FILE, first_last_means  # noqa: E402

KEYS = ("total_reward", "r_perf", "r_parallel", "num_subagents", "critical_steps",
        "serial_steps", "speedup", "accuracy")  # fmt: skip
PANELS = (
    ("total_reward", "total reward"),
    ("r_perf", "r_perf (accuracy)"),
    ("num_subagents", "sub-agents per episode"),
    ("speedup", "serial / critical steps"),
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "configs/parl/grpo_learn.json")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument(
        "--control-seeds",
        type=int,
        nargs="*",
        default=[],
        help="untrained controls (learning_rate 1e-12) for these seeds",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="take runs already recorded in OUT.json instead of re-running",
    )
    parser.add_argument("--steps", type=int, default=None, help="override grpo.num_steps")
    parser.add_argument("--k", type=int, default=10, help="steps in the first/last windows")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs/parl_learning",
                        help="run directories (one per seed)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=ROOT / "docs/parl_learning",
                        help="writes OUT.json and OUT.png")  # fmt: skip
    return parser.parse_args()


CONTROL_LR = 1e-12
"""The untrained control's learning rate: AdamW moves each weight by about this much."""


def display_path(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (no machine paths in docs)."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def run_seed(args: argparse.Namespace, seed: int, kind: str) -> dict[str, Any]:
    out = args.runs / (f"seed{seed}" if kind == "trained" else f"untrained_seed{seed}")
    langmarl = str(Path(sys.executable).parent / "langmarl")
    command = [langmarl, "parl", "grpo", "--config", str(args.config),
               "--set", f"seed={seed}", "--set", f"runs_dir={out.parent}",
               "--set", f"run_id={out.name}"]  # fmt: skip
    if args.steps:
        command += ["--set", f"grpo.num_steps={args.steps}"]
    if kind == "untrained":
        command += ["--set", f"grpo.learning_rate={CONTROL_LR}"]
    env = {**os.environ, "LANGMARL_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}
    print("$", " ".join(command), flush=True)
    started = time.monotonic()
    with LoadSampler(interval=30.0) as load:
        subprocess.run(command, check=True, env=env, cwd=ROOT)
    wall = time.monotonic() - started
    document = json.loads((out / CURVES_FILE).read_text(encoding="utf-8"))
    curve = document["curve"]
    summary = first_last_means(curve, args.k, KEYS)
    last_plans = [row["plan"] for row in document["episodes"][-6:] if "plan" in row]
    return {"kind": kind, "seed": seed, "run_dir": display_path(out),
            "wall_seconds": round(wall, 1),
            "load_average_1min": load.samples, "summary": summary,
            "last_plans": last_plans, "curve": curve}  # fmt: skip


def plan_analysis(result: dict[str, Any], config: dict[str, Any], k: int) -> dict[str, Any]:
    """Per window (first/last ``k`` steps): how the plans relate to the tasks' own parts.

    ``copied``: share of the task's questions that appear verbatim as a sub-task;
    ``exact``: plans whose sub-tasks are exactly the task's questions, in order;
    ``extra``: sub-agents beyond the task's part count (spurious parallelism);
    ``parts``: the tasks' mean part count (the task mix differs between windows).
    """
    from langmarl.envs.parallel.plan import parse_plan
    from langmarl.envs.parallel.tasks import load_task_set

    env = config["env"]
    tasks = load_task_set(env.get("task_set", "arithmetic"), env.get("num_tasks", 32),
                          seed=env.get("seed", 0))  # fmt: skip
    by_id = {task.task_id: task for task in tasks}
    cap, fallback = env.get("max_subagents", 8), env.get("plan_fallback", "parts")
    episodes = json.loads((ROOT / result["run_dir"] / CURVES_FILE).read_text())["episodes"]
    last_start = max(row["step"] for row in episodes) + 1 - k
    windows: dict[str, Any] = {}
    for name, keep in (("first", lambda s: s < k), ("last", lambda s: s >= last_start)):
        rows = [row for row in episodes if keep(row["step"])]
        stats = {"episodes": len(rows), "parts": 0.0, "copied": 0.0, "exact": 0, "extra": 0.0}
        statuses: dict[str, int] = {}
        for row in rows:
            task = by_id[row["task_id"]]
            questions = [part.question for part in task.parts]
            subtasks = parse_plan(row["plan"], task.prompt, fallback).subtasks[:cap]
            stats["parts"] += len(questions) / len(rows)
            stats["copied"] += sum(q in subtasks for q in questions) / len(questions) / len(rows)
            stats["exact"] += subtasks == questions
            stats["extra"] += max(0, len(subtasks) - len(questions)) / len(rows)
            statuses[row["plan_status"]] = statuses.get(row["plan_status"], 0) + 1
        windows[name] = {key: round(v, 3) if isinstance(v, float) else v
                         for key, v in stats.items()} | {"plan_status": statuses}  # fmt: skip
    return windows


def print_summary(result: dict[str, Any], k: int) -> None:
    load = result["load_average_1min"]
    head = f"{result['kind']} seed {result['seed']}: {len(result['curve'])} steps"
    print(f"\n{head}, {result['wall_seconds']:.0f} s wall, "
          f"load average {min(load):.2f}-{max(load):.2f}")  # fmt: skip
    print(f"  {'':16} {'first ' + str(k):>9} {'last ' + str(k):>9} {'change':>8}")
    for key, value in result["summary"].items():
        print(f"  {key:16} {value['first']:9.3f} {value['last']:9.3f} {value['change']:+8.3f}")
    for window, stats in result["plans"].items():
        print(f"  plans, {window} {k}: {stats}")


COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red")


def moving_average(values: list[float], window: int) -> list[float]:
    out = []
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1) : i + 1]
        out.append(sum(chunk) / len(chunk))
    return out


def plot(results: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for ax, (key, label) in zip(axes.flat, PANELS, strict=True):
        for i, result in enumerate(results):
            trained = result["kind"] == "trained"
            color = COLORS[i % len(COLORS)] if trained else "tab:gray"
            style = "-" if trained else "--"
            steps = [p["step"] for p in result["curve"]]
            values = [float(p[key]) for p in result["curve"]]
            ax.plot(steps, values, color=color, alpha=0.25, linewidth=1, linestyle=style)
            ax.plot(steps, moving_average(values, 5), color=color, linewidth=2, linestyle=style,
                    label=f"{result['kind']} seed {result['seed']} (5-step mean)")  # fmt: skip
        ax.set_title(label)
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("GRPO step")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def recorded_runs(path: Path, config: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    """Runs recorded in an earlier ``OUT.json`` of the same config, by ``(kind, seed)``."""
    if not path.exists():
        return {}
    document = json.loads(path.read_text(encoding="utf-8"))
    if document.get("config_data") != config:
        print(f"{path} was made with another config: not reusing it", flush=True)
        return {}
    # summaries and plan analyses are recomputed; "plan_status" came from an earlier version
    runs = [{"kind": "trained", **run} for run in document["runs"]]
    for run in runs:
        run.pop("plan_status", None)
    return {(run["kind"], run["seed"]): run for run in runs}


def main() -> None:
    args = parse_args()
    config = json.loads(args.config.read_text(encoding="utf-8"))
    json_path, png_path = args.out.with_suffix(".json"), args.out.with_suffix(".png")
    recorded = recorded_runs(json_path, config) if args.reuse else {}
    wanted = [("trained", s) for s in args.seeds] + [("untrained", s) for s in args.control_seeds]
    results = []
    for kind, seed in wanted:
        if (kind, seed) in recorded:
            print(f"reusing the recorded {kind} run of seed {seed}", flush=True)
            results.append(recorded[kind, seed])
        else:
            results.append(run_seed(args, seed, kind))
    for result in results:
        result["summary"] = first_last_means(result["curve"], args.k, KEYS)
        result["plans"] = plan_analysis(result, config, args.k)
        print_summary(result, args.k)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document = {"config": str(args.config.relative_to(ROOT)), "config_data": config,
                "k": args.k, "runs": results}  # fmt: skip
    json_path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    title = (f"langmarl parl grpo, {args.config.name}: SmolLM2-135M orchestrator (LoRA), "
             "frozen embedded sub-agents, constant λ\ncoloured: trained seeds; "
             "gray dashed: untrained control (learning_rate 1e-12)")  # fmt: skip
    plot(results, png_path, title)
    print(f"\nwrote {json_path} and {png_path}")


if __name__ == "__main__":
    print_machine()
    main()
