"""The referential game: untrained team, language space, weight space, and weights then
language, at equal wall time, over seeds and both conditions, in one invocation (issue 43).

For each condition (``far``, ``close``) and seed, one run after the other, through the real
commands, on the same held-out episodes (greedy):

- ``untrained``: the untrained team (the speaker's starting prompt, the ranking listener):
  the ``before`` of the seed's ``weights`` run, which costs no training time;
- ``language``: ``langmarl train configs/reference_<condition>.json`` (the pool search over
  the demonstrations of a speaker that chooses one of the target's words) for
  ``budget / round_seconds`` iterations, then ``langmarl eval``;
- ``weights``: ``langmarl magrpo train configs/magrpo/reference_<condition>.json`` (MAGRPO,
  LoRA, the speaker choosing one of the target's words, trained against the frozen ranking
  listener) for
  ``budget / step_seconds`` steps; its held-out report gives before and after;
- ``combined``: half the budget of MAGRPO steps, then half the pool iterations on that
  run's trained speaker (``agent_models.speaker``: its last checkpoint).

The budget is turned into steps and iterations by the seconds each takes (``--step-seconds``,
``--round-seconds``: measured here, see benchmarks/RESULTS.md); every run's actual wall time
is printed beside its result with the load average, so "equal wall time" can be checked.
Writes ``<out>/reference_game.json`` and ``.png`` and prints a table. ``--tiny`` runs every
arm at its smallest (one seed, ``close``, one step, one iteration, two held-out episodes);
``--plan`` prints the commands and checks them against the configs without running them.

    .venv/bin/python benchmarks/reference_game.py                   # 3 seeds, 15 min each
    .venv/bin/python benchmarks/reference_game.py --seeds 0 --conditions close --budget-min 5
    .venv/bin/python benchmarks/reference_game.py --tiny

``--jobs N`` runs N arms at once; run it with ``LANGMARL_TORCH_THREADS=1`` so each arm
keeps to one core, and at most as many jobs as cores, or the arms no longer get equal time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from machine_load import print_machine  # beside this script

ROOT = Path(__file__).resolve().parent.parent
LANGMARL = Path(sys.executable).parent / "langmarl"
ARMS = ("untrained", "language", "weights", "combined")
TINY_LANGUAGE = ["trajectories_per_iteration=4", "validation_size=2", "pool.children=1",
                 "pool.samples_per_task=2", "num_train=4"]  # fmt: skip
"""Language settings of ``--tiny`` (the smallest pool iteration that still proposes)."""


@dataclass(frozen=True)
class Sizes:
    """How much each arm trains, and on how many held-out episodes it is scored."""

    steps: int
    rounds: int
    num_eval: int = 30
    language: tuple[str, ...] = ()
    weights: tuple[str, ...] = ()


@dataclass
class Arm:
    """One run of the benchmark: its commands (run in order) and where its result lies."""

    name: str
    condition: str
    seed: int
    commands: list[list[str]] = field(default_factory=list)
    run_dir: Path = Path()


def sizes(args: argparse.Namespace) -> Sizes:
    """The arms' sizes for the budget (``--tiny``: the smallest)."""
    if args.tiny:
        return Sizes(steps=1, rounds=1, num_eval=2, language=tuple(TINY_LANGUAGE),
                     weights=("trainer.num_generations=2", "task.num_train=2"))  # fmt: skip
    budget = args.budget_min * 60
    steps, rounds = (max(1, round(budget / args.step_seconds)),
                     max(1, round(budget / args.round_seconds)))  # fmt: skip
    return Sizes(steps=steps, rounds=rounds, num_eval=args.num_eval)


def _sets(items: Sequence[str]) -> list[str]:
    return [part for item in items for part in ("--set", item)]


def weights_commands(condition: str, seed: int, run_dir: Path, steps: int, sz: Sizes) -> list[str]:
    """``langmarl magrpo train`` of the condition's run file for ``steps`` steps."""
    sets = [f"runs_dir={run_dir.parent}", f"run_id={run_dir.name}", f"seed={seed}",
            f"trainer.max_steps={steps}", "trainer.num_train_epochs=100",
            f"task.num_eval={sz.num_eval}", f"trainer.eval_num_samples={sz.num_eval}",
            *sz.weights]  # fmt: skip
    config = f"configs/magrpo/reference_{condition}.json"
    return [str(LANGMARL), "magrpo", "train", config, "--no-plot", *_sets(sets)]


def language_commands(
    condition: str, seed: int, run_dir: Path, rounds: int, sz: Sizes, extra: Sequence[str] = ()
) -> list[list[str]]:
    """``langmarl train`` of the condition's config for ``rounds`` iterations, then its eval."""
    sets = [f"seed={seed}", f"exp_name={run_dir.name}", f"runs_dir={run_dir.parent}",
            f"num_iterations={rounds}", f"num_eval={sz.num_eval}",
            *sz.language, *extra]  # fmt: skip
    train = [str(LANGMARL), "train", f"configs/reference_{condition}.json", *_sets(sets)]
    return [train, [str(LANGMARL), "eval", str(run_dir)]]


def plan(args: argparse.Namespace) -> list[Arm]:
    """The arms to run, in order (a ``combined`` arm after its ``weights`` half)."""
    sz, arms = sizes(args), []
    for condition in args.conditions:
        for seed in args.seeds:
            base = args.out / condition / f"seed{seed}"
            weights = Arm("weights", condition, seed, run_dir=base / "weights")
            weights.commands = [weights_commands(condition, seed, weights.run_dir, sz.steps, sz)]
            language = Arm("language", condition, seed, run_dir=base / "language")
            language.commands = language_commands(condition, seed, language.run_dir, sz.rounds, sz)
            half = Arm("combined", condition, seed, run_dir=base / "combined")
            first = base / "combined-weights"
            speaker = f"agent_models.speaker={first / 'checkpoints' / 'final' / 'agent-0'}"
            half.commands = [
                weights_commands(condition, seed, first, max(1, sz.steps // 2), sz),
                *language_commands(condition, seed, half.run_dir, max(1, sz.rounds // 2), sz,
                                   [speaker]),
            ]  # fmt: skip
            arms += [a for a in (weights, language, half) if a.name in args.arms or (
                a.name == "weights" and "untrained" in args.arms)]  # fmt: skip
    return arms


def run_arm(arm: Arm, logs: Path) -> tuple[float, float, float]:
    """Run the arm's commands; (seconds, load before, load after).

    Raises:
        SystemExit: naming the log when a command fails.
    """
    before, started = os.getloadavg()[0], time.perf_counter()
    for index, command in enumerate(arm.commands):
        if arm.name == "combined" and index == 1:
            _link_final_checkpoint(arm.run_dir.parent / "combined-weights")
        log = logs / f"{arm.condition}-seed{arm.seed}-{arm.name}-{index}.log"
        with log.open("w") as out:
            done = subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command[1:3])} failed (exit {done.returncode}): see {log}")
    return time.perf_counter() - started, round(before, 2), round(os.getloadavg()[0], 2)


def _link_final_checkpoint(run_dir: Path) -> None:
    """``checkpoints/final`` → the run's newest ``step-*`` checkpoint (the combined arm's
    language half names it before the number of the last step is known)."""
    steps = sorted((run_dir / "checkpoints").glob("step-*"))
    if not steps:
        sys.exit(f"no MAGRPO checkpoint under {run_dir}: its training did not save one")
    final = run_dir / "checkpoints" / "final"
    if final.is_symlink():
        final.unlink()
    final.symlink_to(steps[-1].name)


def results(arm: Arm) -> tuple[list[float], list[float]]:
    """The arm's per-episode held-out rewards, before and after training."""
    if arm.name == "weights":
        report = json.loads((arm.run_dir / "heldout.json").read_text())
        return report["before"]["returns"], report["after"]["returns"]
    compare = json.loads((arm.run_dir / "evals" / "test_compare.json").read_text())
    return compare["initial"]["rewards"], compare["final"]["rewards"]


def row(
    name: str, arm: Arm, timing: tuple[float, float, float], values: Sequence[list[float]]
) -> dict[str, Any]:
    """A table row: the arm's held-out intervals, its wall time and the load around it."""
    from langmarl.core.intervals import score_interval

    before, after = (score_interval(v).model_dump() for v in values)
    seconds, load_before, load_after = timing
    return {"arm": name, "condition": arm.condition, "seed": arm.seed,
            "seconds": round(seconds, 1), "load": [load_before, load_after],
            "before": before, "after": after}  # fmt: skip


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a text table: held-out before → after (95% CI), minutes and load."""
    lines = [f"{'condition':9} {'arm':9} {'seed':>4}  {'before':>22}  {'after':>22}  "
             f"{'n':>3} {'min':>5}  load"]  # fmt: skip
    for r in rows:
        b, a = r["before"], r["after"]
        lines.append(
            f"{r['condition']:9} {r['arm']:9} {r['seed']:>4}  "
            f"{b['mean']:.3f} [{b['low']:.3f}, {b['high']:.3f}]  "
            f"{a['mean']:.3f} [{a['low']:.3f}, {a['high']:.3f}]  {a['n']:>3} "
            f"{r['seconds'] / 60:>5.1f}  {r['load'][0]} → {r['load'][1]}"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Held-out reward after training per arm (dots: seeds, bars: 95% CI), one panel per
    condition, the untrained team's level as the first arm."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    conditions = sorted({r["condition"] for r in rows}, key=["far", "close"].index)
    figure, axes = plt.subplots(1, len(conditions), figsize=(4 * len(conditions), 3.4),
                                squeeze=False, sharey=True)  # fmt: skip
    for axis, condition in zip(axes[0], conditions, strict=True):
        mine = [r for r in rows if r["condition"] == condition]
        for x, arm in enumerate(ARMS):
            for offset, r in enumerate(r for r in mine if r["arm"] == arm):
                value = r["after"]
                spread = [[max(0.0, value["mean"] - value["low"])],
                          [max(0.0, value["high"] - value["mean"])]]  # fmt: skip
                axis.errorbar([x + 0.12 * offset], [value["mean"]], yerr=spread, fmt="o",
                              color="#2a7ab0", capsize=3)  # fmt: skip
        axis.axhline(1 / 3, color="#bbbbbb", linestyle=":", linewidth=1)
        axis.set_xticks(range(len(ARMS)), ARMS, fontsize=8)
        axis.set_ylim(0, 1.05)
        axis.set_title(f"{condition} (chance 1/3)", fontsize=9)
    axes[0][0].set_ylabel("held-out reward (greedy)")
    figure.suptitle("Referential game, equal wall time per arm", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def check_plan(arms: list[Arm]) -> None:
    """Load every command's config with its ``--set`` overrides, as the commands would.

    Raises:
        ConfigError: naming the field a command sets wrongly.
    """
    from langmarl.cli.common import parse_overrides
    from langmarl.config.loading import load_config
    from langmarl.magrpo.run import load_run_config

    for arm in arms:
        for command in arm.commands:
            sets = [command[i + 1] for i, part in enumerate(command) if part == "--set"]
            overrides = parse_overrides(sets)
            if command[1] == "magrpo":
                load_run_config(ROOT / command[3], overrides)
            elif command[1] == "train":
                load_config(ROOT / command[2], overrides)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--conditions", nargs="+", default=["far", "close"],
                        choices=["far", "close"])  # fmt: skip
    parser.add_argument("--arms", nargs="+", default=list(ARMS), choices=ARMS)
    parser.add_argument("--budget-min", type=float, default=15.0,
                        help="training wall time per arm, minutes")  # fmt: skip
    parser.add_argument("--step-seconds", type=float, default=2.5,
                        help="seconds per MAGRPO step (sets the steps of the budget)")  # fmt: skip
    parser.add_argument("--round-seconds", type=float, default=30.0,
                        help="seconds per pool iteration (sets the iterations)")  # fmt: skip
    parser.add_argument("--num-eval", type=int, default=30, help="held-out episodes")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "reference_game")
    parser.add_argument("--jobs", type=int, default=1,
                        help="arms run at once (each on one torch thread: at most the "
                        "cores; the printed load shows whether they had them)")  # fmt: skip
    parser.add_argument("--tiny", action="store_true",
                        help="one seed, close, a step, a round, 2 held-out episodes")  # fmt: skip
    parser.add_argument("--plan", action="store_true",
                        help="print and check the commands; run nothing")  # fmt: skip
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    if args.tiny:
        args.seeds, args.conditions = args.seeds[:1], ["close"]
    return args


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    arms = plan(args)
    if args.plan:
        check_plan(arms)
        for arm in arms:
            for command in arm.commands:
                print(f"{arm.condition} seed {arm.seed} {arm.name}: {' '.join(command[1:])}")
        return []
    (args.out / "logs").mkdir(parents=True, exist_ok=True)
    print(f"started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.jobs} arm(s) "
          "at a time", flush=True)  # fmt: skip

    def run(arm: Arm) -> list[dict[str, Any]]:
        timing = run_arm(arm, args.out / "logs")
        before, after = results(arm)
        new = [row("untrained", arm, (0.0, *timing[1:]), (before, before))] if (
            arm.name == "weights" and "untrained" in args.arms) else []  # fmt: skip
        new += [row(arm.name, arm, timing, (before, after))] if arm.name in args.arms else []
        print("\n".join(table(new).splitlines()[1:]), flush=True)
        return new

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = [r for done in pool.map(run, arms) for r in done]
    print(table(rows))
    (args.out / "reference_game.json").write_text(json.dumps(rows, indent=1) + "\n")
    plot(rows, args.out / "reference_game.png")
    print(f"wrote {args.out / 'reference_game'}.json and .png")
    return rows


if __name__ == "__main__":
    print_machine()
    main()
