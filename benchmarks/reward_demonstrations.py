"""Free-form reward code from the embedded model, with and without demonstrations (issue 38):
for every shipped case, the author writes one reward (no review, no fix round) after k
verified rewards of other envs shown as earlier chat turns (``langmarl.p2p.design.
demonstrations``, the most similar last), for k = 0, 1, 2. Per k it counts the rewards that
validate in the sandbox and, for the movement intents, those whose x-velocity term points
the way the intent asks (backwards: a negative weight; forward: a positive one).

    python benchmarks/reward_demonstrations.py [--k 0 1 2]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine_load import LoadSampler, print_machine

from langmarl.p2p.agents.author import author_reward
from langmarl.p2p.bench.cases import read_cases
from langmarl.p2p.design import demonstrations
from langmarl.p2p.reward.env_specs import get_env_spec

CASES = Path(__file__).resolve().parents[1] / "configs" / "p2p" / "cases.csv"


def direction(code: str) -> float | None:
    """The sign of the reward's x-velocity weight (None: no such linear term)."""
    found = re.search(r'(-?[\d.]+) \* float\(info\["x_velocity"\]\)', code)
    return None if found is None else float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print_machine()
    from langmarl.llm import LLMClient, LLMConfig

    llm = LLMClient(LLMConfig.from_preset("local"), role="p2p")
    cases = read_cases(CASES)
    began = time.monotonic()
    with LoadSampler() as load:
        for k in args.k:
            valid = right = moving = 0
            for case in cases:
                shown = demonstrations.choose(case.instruction, case.env_id, k)
                got = author_reward(llm, case.instruction, f"- {case.instruction}",
                                    get_env_spec(case.env_id), do_review=False,
                                    max_fix_attempts=0, demos=shown)  # fmt: skip
                wanted = -1 if "backwards" in case.instruction else (
                    1 if "forward" in case.instruction else 0)  # fmt: skip
                weight = direction(got.source) if got.source else None
                valid += got.source is not None
                moving += wanted != 0
                right += wanted != 0 and weight is not None and weight * wanted > 0
                copied = demonstrations.adapted_from(got.source, shown) if got.source else None
                what = "invalid" if got.source is None else (
                    f"x_velocity weight {weight}" + (" (a copy)" if copied else ""))  # fmt: skip
                print(f"k={k} {case.instruction} ({case.env_id}): {what}; shown "
                      f"{[d.intent for d in shown]}", flush=True)  # fmt: skip
            print(
                f"k={k}: {valid} of {len(cases)} validate; the x velocity points the way "
                f"the intent asks in {right} of {moving} movement intents\n",
                flush=True,
            )
    print(f"{(time.monotonic() - began) / 60:.1f} min, load {load.summary()}")


if __name__ == "__main__":
    main()
