"""Language space vs weight space on the poster task, side by side (issue 24).

For each seed, in one invocation and one after the other (each run alone on the machine,
torch's default threads), through the real commands:

- ``language``: ``langmarl train configs/poster_pool.json`` (the pool search: two embedded
  SmolLM2-135M agents whose demonstrations come from their own episodes), then
  ``langmarl eval`` — held-out reward of the starting and the best policies, greedy, on the
  20 held-out topics;
- ``weights``: ``langmarl magrpo train configs/magrpo/quickstart.json`` with ``--steps``
  steps (MAGRPO, LoRA; epochs are not the limit: one pass over the 82 training topics is
  only 20 steps), whose run ends with the held-out reward of the
  untrained and the trained agents on the same 20 topics, greedy.

Both runs are given about the same wall time by their sizes (``--rounds`` and
``--steps``); each run's actual wall time is printed beside its result, with the load
average before and after. Writes ``docs/language_vs_weights.{json,png}``.

``combined`` (in ``--spaces``): the two together — the seed's MAGRPO-trained agents (its
``weights`` run's final checkpoint, one model per agent loaded in process through
``agent_models``, one torch thread per engine) optimized further by the pool search; its
"before" is those agents with the starting language policy, on the same 20 topics.

    .venv/bin/python benchmarks/language_vs_weights.py --seeds 0 1 2
    .venv/bin/python benchmarks/language_vs_weights.py --seeds 0 --spaces weights,combined
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

from machine_load import print_machine  # beside this script

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
LANGMARL = Path(sys.executable).parent / "langmarl"


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def interval(values: list[float]) -> dict[str, Any]:
    from langmarl.core.intervals import score_interval

    return score_interval(values).model_dump()


def timed(
    command: list[str], log: Path, env: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """Run ``command`` with its output in ``log``; (seconds, load before, load after).

    Raises:
        SystemExit: naming the log when the command fails.
    """
    before, started = load_average(), time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(
            command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env or None
        )
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[:3])} failed (exit {done.returncode}): see {log}")
    return time.perf_counter() - started, before, load_average()


def language(
    seed: int, out: Path, rounds: int, space: str = "language", extra: list[str] | None = None
) -> dict[str, Any]:
    name = f"{space}-seed{seed}"
    sets = [f"seed={seed}", f"exp_name={name}", f"runs_dir={out}", f"num_iterations={rounds}"]
    train = [str(LANGMARL), "train", "configs/poster_pool.json"]
    for item in [*sets, *(extra or [])]:
        train += ["--set", item]
    env = dict(os.environ, LANGMARL_TORCH_THREADS="1") if space == "combined" else None
    seconds, before, after = timed(train, out / f"{name}.log", env)
    timed([str(LANGMARL), "eval", str(out / name)], out / f"{name}.eval.log", env)
    result = json.loads((out / name / "evals" / "test_compare.json").read_text())
    rewards = (result["initial"]["rewards"], result["final"]["rewards"])
    return record(space, seed, seconds, before, after, *rewards)


def combined(seed: int, out: Path, rounds: int) -> dict[str, Any]:
    """The pool search on the seed's MAGRPO-trained agents (see the module docstring)."""
    steps = sorted((out / f"weights-seed{seed}" / "checkpoints").glob("step-*"))
    if not steps:
        sys.exit(f"no MAGRPO checkpoint under {out / f'weights-seed{seed}'}: run weights first")
    models = [f"agent_models.key_word={steps[-1] / 'agent-0'}",
              f"agent_models.tagline={steps[-1] / 'agent-1'}"]  # fmt: skip
    return language(seed, out, rounds, "combined", models)


def weights(seed: int, out: Path, steps: int) -> dict[str, Any]:
    run_dir = out / f"weights-seed{seed}"
    command = [
        str(LANGMARL), "magrpo", "train", "configs/magrpo/quickstart.json", "--no-plot",
        "--set", f"runs_dir={run_dir.parent}", "--set", f"run_id={run_dir.name}",
        "--set", f"seed={seed}",
        "--set", f"trainer.max_steps={steps}", "--set", "trainer.num_train_epochs=100",
    ]  # fmt: skip
    seconds, before, after = timed(command, out / f"weights-seed{seed}.log")
    report = json.loads((run_dir / "heldout.json").read_text())
    return record("weights", seed, seconds, before, after,
                  report["before"]["returns"], report["after"]["returns"])  # fmt: skip


def record(
    space: str, seed: int, seconds: float, load_before: float, load_after: float,
    before: list[float], after: list[float],
) -> dict[str, Any]:  # fmt: skip
    row = {
        "space": space, "seed": seed, "seconds": round(seconds, 1),
        "load_before": load_before, "load_after": load_after,
        "before": interval(before), "after": interval(after),
    }  # fmt: skip
    b, a = row["before"], row["after"]
    print(
        f"{space:8} seed {seed}: {b['mean']:.3f} [{b['low']:.3f}, {b['high']:.3f}] → "
        f"{a['mean']:.3f} [{a['low']:.3f}, {a['high']:.3f}] (n={a['n']}) in "
        f"{seconds / 60:.1f} min, load {load_before} → {load_after}",
        flush=True,
    )
    return row


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 3.6))
    x = -1
    for space in ("language", "weights", "combined"):
        mine = [r for r in rows if r["space"] == space]
        x += 1 if mine else 0  # a gap between spaces
        for row in mine:
            x += 1
            for key, colour in (("before", "#bbbbbb"), ("after", "#2a7ab0")):
                value = row[key]
                spread = [[value["mean"] - value["low"]], [value["high"] - value["mean"]]]
                axis.errorbar(
                    [x + (0.15 if key == "after" else -0.15)],
                    [value["mean"]],
                    yerr=spread,
                    fmt="o",
                    color=colour,
                    capsize=3,
                    label=key if row is rows[0] else None,
                )
            axis.annotate(f"{space}\nseed {row['seed']}\n{row['seconds'] / 60:.1f} min",
                          (x, 0.02), ha="center", fontsize=7)  # fmt: skip
    axis.set_ylim(0, 1.05)
    axis.set_xticks([])
    axis.set_ylabel("held-out reward (n=20, greedy)")
    names = {"language": "language space (pool)", "weights": "weight space (MAGRPO)",
             "combined": "MAGRPO then pool"}  # fmt: skip
    shown = [names[s] for s in names if any(r["space"] == s for r in rows)]
    axis.set_title("Poster task: " + ", ".join(shown))
    axis.legend(loc="center left", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def replot(name: str) -> None:
    """Draw ``docs/NAME.png`` again from ``docs/NAME.json``."""
    plot(json.loads((DOCS / f"{name}.json").read_text()), DOCS / f"{name}.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--spaces", default="language,weights")
    parser.add_argument("--rounds", type=int, default=8, help="language-space rounds")
    parser.add_argument("--steps", type=int, default=68, help="MAGRPO steps (~7.5 s each)")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "language_vs_weights")
    parser.add_argument("--name", default="language_vs_weights", help="docs/NAME.{json,png}")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    spaces = args.spaces.split(",")
    rows = []
    print(f"started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load {load_average()}", flush=True)  # fmt: skip
    for seed in args.seeds:
        if "language" in spaces:
            rows.append(language(seed, args.out, args.rounds))
        if "weights" in spaces:
            rows.append(weights(seed, args.out, args.steps))
        if "combined" in spaces:
            rows.append(combined(seed, args.out, args.rounds))
    DOCS.mkdir(exist_ok=True)
    (DOCS / f"{args.name}.json").write_text(json.dumps(rows, indent=1) + "\n")
    plot(rows, DOCS / f"{args.name}.png")
    print(f"wrote {DOCS / args.name}.json and .png")


if __name__ == "__main__":
    print_machine()
    main()
