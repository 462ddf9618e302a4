"""Reward space on the embedded model, every shipped case (issue 38, item 4): the check's score
of the best policy each arm finds at one PPO budget, side by side in one invocation.

    fallback    the environment's own reward terms, trained on as many seeds as a search
                trains candidates, the best kept by the check: no reward design
    random      the search (``author: random``): K candidates per iteration drawn at random
                from the env's term catalog, then variants of the best (no model)
    embedded    the search (``author: structured``): the embedded model ranks the env's
                objectives, the top K train, then variants of the best and the next-ranked
    reference   the person-written reward (configs/p2p/references), one run

Both searches are real ``langmarl p2p run`` sessions (the loop, its candidates and its
check), ``--candidates`` per iteration for ``--iterations`` iterations, one seed each; a
session stops early only on a perfect check (pass threshold 1.0). Every run trains in its
own confined executor process, two at a time. Per case and arm the table gives the mean of
the arm's best score over the seeds with a 95% t interval, and each search's
human-normalised score ``(s - s_fallback) / (s_reference - s_fallback)`` (n/a where the
reference does not beat the fallback by 0.05).

    python benchmarks/reward_space_learning.py [--timesteps 30000] [--seeds 1 2 3]
        [--candidates 2] [--iterations 2] [--cases N] [--only WORD ...]
        [--out runs/reward_space_learning.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine_load import LoadSampler, print_machine

from langmarl.core.intervals import score_interval
from langmarl.p2p.agents.author import fallback_reward
from langmarl.p2p.agents.judge import load_episodes
from langmarl.p2p.bench.cases import BenchCase, read_cases
from langmarl.p2p.design import checks
from langmarl.p2p.learner.executor import train_runs
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.reward.env_specs import get_env_spec
from langmarl.p2p.session.records import IterationRecord

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "configs" / "p2p" / "cases.csv"
ARMS = ("fallback", "random", "embedded", "reference")
HORIZON = 500
"""Steps per episode (training and evaluation)."""


def train_config(env_id: str, timesteps: int) -> TrainConfig:
    return TrainConfig.for_env(
        env_id, total_timesteps=timesteps, num_steps=1024, n_epochs=5, max_episode_steps=HORIZON,
        num_evals=1, eval_episodes=5, record_video=False,
    )  # fmt: skip


def one_run(work: Path, case: BenchCase, arm: str, seed: int, source: str,
            timesteps: int) -> dict[str, Any]:  # fmt: skip
    """Train one reward on one seed and score the run's episodes with the case's check."""
    slug = re.sub(r"\W+", "_", case.instruction)
    it = IterationRecord(work / f"{case.env_id}-{slug}-{arm}-{seed}")
    it.path.mkdir(parents=True)
    reward = it.path / "reward_fn.py"
    reward.write_text(source)
    aggregation = train_runs(it, reward, [train_config(case.env_id, timesteps)], [seed],
                             max_parallel=1, timeout_s=1800)  # fmt: skip
    trajectory = it.trajectory_path
    if not aggregation.runs or trajectory is None:
        return {"score": None, "error": str(aggregation.errors)[:300], "steps": 0}
    result = checks.run_check(checks.read_check(case.check), load_episodes(trajectory), 1.0,
                              horizon=HORIZON)  # fmt: skip
    steps = sum(run.steps_done for run in aggregation.runs.values())
    return {"score": result.score, "error": result.reason or None, "steps": steps}


def fallback(work: Path, case: BenchCase, seed: int, runs: int, timesteps: int) -> dict:
    """The env's own reward on ``runs`` seeds, the best kept by the check."""
    source = fallback_reward(get_env_spec(case.env_id))
    found = [one_run(work, case, "fallback", seed + 1000 * k, source, timesteps)
             for k in range(runs)]  # fmt: skip
    scores = [r["score"] for r in found if r["score"] is not None]
    return {"score": max(scores, default=None), "steps": sum(r["steps"] for r in found),
            "what": f"best of {runs} seeds", "scores": [r["score"] for r in found]}  # fmt: skip


def session(work: Path, case: BenchCase, author: str, seed: int, args: Any, llm: Any) -> dict:
    """A search session on the case: its best candidate's check score and what it tried."""
    from langmarl.p2p.session.loop import LoopConfig, run_loop

    config = LoopConfig(
        env_id=case.env_id, author=author, candidates=args.candidates,
        max_iterations=args.iterations, pass_threshold=1.0, check=case.check, seed=seed,
        total_timesteps=args.timesteps, elaborate=False, review=False, code_judge=False,
        summary_judge=False, analyze=False, max_parallel=1,
        train=train_config(case.env_id, args.timesteps).model_dump(
            exclude={"env_id", "total_timesteps"}),
    )  # fmt: skip
    slug = re.sub(r"\W+", "_", case.instruction)
    result = run_loop(case.instruction, config, llm=llm, runs_dir=work,
                      session_id=f"{slug}-{author}-{seed}")  # fmt: skip
    tried = [f"{c.proposal or c.origin} {c.score if c.score is None else round(c.score, 2)}"
             for step in result.iterations for c in step.candidates]  # fmt: skip
    return {"score": result.best_score, "steps": result.ppo_steps, "what": "; ".join(tried),
            "error": result.error if result.status == "error" else None}  # fmt: skip


def arm_run(work: Path, case: BenchCase, arm: str, seed: int, args: Any, llm: Any) -> dict:
    began = time.monotonic()
    if arm == "fallback":
        row = fallback(work, case, seed, args.candidates * args.iterations, args.timesteps)
    elif arm == "reference":
        source = Path(case.reference).read_text()
        row = one_run(work, case, arm, seed, source, args.timesteps) | {"what": "reference"}
    else:
        row = session(work, case, "random" if arm == "random" else "structured", seed, args, llm)
    return {"case": case.instruction, "arm": arm, "seed": seed,
            "seconds": round(time.monotonic() - began, 1)} | row  # fmt: skip


def summarize(rows: list[dict[str, Any]], cases: list[BenchCase]) -> list[str]:
    """The markdown table: per case and arm, mean check score [95% CI] over the seeds."""
    lines = ["| case | " + " | ".join(ARMS) + " | normalised: random | embedded |",
             "|---|" + "---|" * (len(ARMS) + 2)]  # fmt: skip
    for case in cases:
        means: dict[str, float] = {}
        cells = []
        for arm in ARMS:
            scores = [r["score"] for r in rows if r["case"] == case.instruction and r["arm"] == arm
                      and r["score"] is not None]  # fmt: skip
            if not scores:
                cells.append("no score")
                continue
            interval = score_interval(scores, method="t", bounds=(0.0, 1.0))
            means[arm] = interval.mean
            bounds = "" if interval.low is None else f" [{interval.low:.2f}, {interval.high:.2f}]"
            cells.append(f"{interval.mean:.2f}{bounds}")
        gap = means.get("reference", 0.0) - means.get("fallback", 0.0)
        normalised = ["n/a" if gap <= 0.05 or arm not in means else
                      f"{(means[arm] - means['fallback']) / gap:.2f}"
                      for arm in ("random", "embedded")]  # fmt: skip
        lines.append(f"| {case.instruction} ({case.env_id}) | " + " | ".join(cells) +
                     f" | {' | '.join(normalised)} |")  # fmt: skip
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=30_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--candidates", type=int, default=2, help="per search iteration")
    parser.add_argument("--iterations", type=int, default=2, help="search iterations")
    parser.add_argument("--cases", type=int, default=None, help="the first N cases only")
    only = "only the cases whose instruction holds one of these words"
    parser.add_argument("--only", nargs="+", default=None, help=only)
    parser.add_argument("--parallel", type=int, default=2, help="arms trained at once")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "reward_space_learning.json")
    args = parser.parse_args()
    print_machine()
    from langmarl.llm import LLMClient, LLMConfig

    cases = read_cases(CASES)[: args.cases]
    if args.only:
        cases = [c for c in cases if any(word in c.instruction for word in args.only)]
    llm = LLMClient(LLMConfig.from_preset("local"), role="p2p")
    jobs = [(case, arm, seed) for case in cases for seed in args.seeds for arm in ARMS]
    began = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="reward-space-") as tmp,
        LoadSampler() as load,
        ThreadPoolExecutor(max_workers=args.parallel) as pool,
    ):
        futures = [pool.submit(arm_run, Path(tmp), case, arm, seed, args, llm)
                   for case, arm, seed in jobs]  # fmt: skip
        rows = []
        for future in futures:
            rows.append(future.result())
            print(json.dumps(rows[-1]), flush=True)
    minutes = (time.monotonic() - began) / 60
    table = summarize(rows, cases)
    steps = sum(r.get("steps") or 0 for r in rows)
    budget = f"{args.candidates} candidates x {args.iterations} iterations x {args.timesteps}"
    print(f"\n{len(rows)} arm runs ({budget} PPO steps per search), {steps:,} PPO steps in "
          f"all, {minutes:.1f} min, load {load.summary()}")  # fmt: skip
    print("\n".join(table))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    saved = {"timesteps": args.timesteps, "seeds": args.seeds, "candidates": args.candidates,
             "iterations": args.iterations, "runs": rows}  # fmt: skip
    args.out.write_text(json.dumps(saved | {"table": table}, indent=1))
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
