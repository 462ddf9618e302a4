"""Reward space on the embedded model, every shipped case (issue 38, item 4): the check's score
of policies trained at one PPO budget on four rewards, side by side in one invocation.

    fallback    the environment's own reward terms: what a user gets without reward design
    random      an objective of the env's term catalog drawn at random (no model), compiled
    embedded    the objective the embedded model ranks first for the intent, compiled (the
                structured author's first iteration)
    reference   the person-written reward (configs/p2p/references)

Every (case, reward, seed) trains in its own confined executor process (two at a time), and
the case's check scores every evaluation episode; a run's score is their mean. Per case and
reward the table gives the mean over the seeds with a 95% t interval, and the embedded
model's human-normalised score ``(s - s_fallback) / (s_reference - s_fallback)`` (n/a where
the reference does not beat the fallback). One candidate per arm: this measures whether the
model's ranking picks the right objective, not a search.

    python benchmarks/reward_space_learning.py [--timesteps 30000] [--seeds 1 2 3]
        [--cases N] [--only WORD ...] [--out runs/reward_space_learning.json]
"""

from __future__ import annotations

import argparse
import json
import random
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
from langmarl.p2p.author import fallback_reward
from langmarl.p2p.bench import BenchCase, read_cases
from langmarl.p2p.design import catalog, checks
from langmarl.p2p.env_specs import get_env_spec
from langmarl.p2p.executor import train_runs
from langmarl.p2p.judge import load_episodes
from langmarl.p2p.records import IterationRecord
from langmarl.p2p.train_config import TrainConfig

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


def rewards(case: BenchCase, ranked: str, seed: int) -> dict[str, tuple[str, str]]:
    """Each arm's ``(what, reward source)`` for one seed."""
    spec = get_env_spec(case.env_id)
    by_name = {o.name: o for o in catalog.objectives(case.env_id)}
    drawn = random.Random(f"{case.instruction}|{seed}").choice(sorted(by_name))

    def compiled(name: str) -> str:
        return catalog.compile_for_env(catalog.objective_proposal(case.env_id, by_name[name]))

    return {
        "fallback": ("env terms", fallback_reward(spec)),
        "random": (drawn, compiled(drawn)),
        "embedded": (ranked, compiled(ranked)),
        "reference": (Path(case.reference).name, Path(case.reference).read_text()),
    }


def one_run(
    work: Path, case: BenchCase, arm: str, seed: int, source: str, timesteps: int
) -> dict[str, Any]:
    """Train one reward on one seed and score the run's episodes with the case's check."""
    slug = re.sub(r"\W+", "_", case.instruction)
    it = IterationRecord(work / f"{case.env_id}-{slug}-{arm}-{seed}")
    it.path.mkdir(parents=True)
    reward = it.path / "reward_fn.py"
    reward.write_text(source)
    began = time.monotonic()
    aggregation = train_runs(it, reward, [train_config(case.env_id, timesteps)], [seed],
                             max_parallel=1, timeout_s=1800)  # fmt: skip
    row: dict[str, Any] = {"case": case.instruction, "arm": arm, "seed": seed,
                           "seconds": round(time.monotonic() - began, 1)}  # fmt: skip
    trajectory = it.trajectory_path
    if not aggregation.runs or trajectory is None:
        return row | {"score": None, "error": str(aggregation.errors)[:300]}
    result = checks.run_check(checks.read_check(case.check), load_episodes(trajectory), 0.7,
                              horizon=HORIZON)  # fmt: skip
    return row | {
        "score": result.score,
        "error": result.reason or None,
        "env_return": aggregation.runs[next(iter(aggregation.runs))].final_env_return,
    }


def summarize(rows: list[dict[str, Any]], cases: list[BenchCase]) -> list[str]:
    """The markdown table: per case and arm, mean check score [95% CI] over the seeds."""
    lines = ["| case | " + " | ".join(ARMS) + " | embedded, human-normalised |",
             "|---|" + "---|" * (len(ARMS) + 1)]  # fmt: skip
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
        normalised = "n/a" if gap <= 0.05 or "embedded" not in means else (
            f"{(means['embedded'] - means['fallback']) / gap:.2f}")  # fmt: skip
        lines.append(f"| {case.instruction} ({case.env_id}) | " + " | ".join(cells) +
                     f" | {normalised} |")  # fmt: skip
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=30_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--cases", type=int, default=None, help="the first N cases only")
    only = "only the cases whose instruction holds one of these words"
    parser.add_argument("--only", nargs="+", default=None, help=only)
    parser.add_argument("--parallel", type=int, default=2, help="training processes at once")
    parser.add_argument("--out", type=Path, default=ROOT / "runs" / "reward_space_learning.json")
    args = parser.parse_args()
    print_machine()
    from langmarl.llm import LLMClient, LLMConfig
    from langmarl.p2p.design.structured import rank_objectives

    cases = read_cases(CASES)[: args.cases]
    if args.only:
        cases = [c for c in cases if any(word in c.instruction for word in args.only)]
    llm = LLMClient(LLMConfig.from_preset("local"), role="p2p")
    ranked = {}
    for case in cases:
        order = rank_objectives(llm, case.instruction, case.env_id)
        ranked[case.instruction] = order[0][0].name
        print(f"{case.instruction}: the model ranks "
              + ", ".join(f"{o.name} {s:.2f}" for o, s in order), flush=True)  # fmt: skip
    jobs = [
        (case, arm, seed, what, source)
        for case in cases
        for seed in args.seeds
        for arm, (what, source) in rewards(case, ranked[case.instruction], seed).items()
    ]
    began = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix="reward-space-") as tmp,
        LoadSampler() as load,
        ThreadPoolExecutor(max_workers=args.parallel) as pool,
    ):
        futures = [pool.submit(one_run, Path(tmp), case, arm, seed, source, args.timesteps)
                   for case, arm, seed, _, source in jobs]  # fmt: skip
        rows = []
        for job, future in zip(jobs, futures, strict=True):
            rows.append(future.result() | {"reward": job[3]})
            print(json.dumps(rows[-1]), flush=True)
    minutes = (time.monotonic() - began) / 60
    table = summarize(rows, cases)
    steps = f"{len(rows)} runs of {args.timesteps} PPO steps"
    print(f"\n{steps}, {minutes:.1f} min, load {load.summary()}")
    print("\n".join(table))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    saved = {"timesteps": args.timesteps, "seeds": args.seeds, "ranked": ranked, "runs": rows}
    args.out.write_text(json.dumps(saved | {"table": table}, indent=1))
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
