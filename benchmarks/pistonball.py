"""Pistonball cycles/s on the embedded model: a cycle's N requests at once vs one at a time.

Every cycle each of N pistons asks the LLM for its move. ``PistonballEnv`` sends a cycle's N
requests together (``asyncio.gather``) and the embedded engine batches them into one
``generate`` call; the baseline sends them one after another. Both play the same seeded
episode with the default policies, side by side in one run, after a warm-up (model load).

Run: ``.venv/bin/python benchmarks/pistonball.py [--pistons 20] [--cycles 3] [--tokens 4]``
"""

from __future__ import annotations

import argparse
import asyncio
import time

from langmarl.config.envs import PistonballConfig
from langmarl.envs.pistonball.env import PistonballEnv
from langmarl.envs.pistonball.episode import llm_decider, play_episode
from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig


async def cycles_per_second(
    env: PistonballEnv, client: LLMClient, *, concurrent: bool, tokens: int
) -> tuple[float, int]:
    """Cycles/s of one seeded episode, and its unreadable replies."""
    decide = llm_decider(
        client, env.default_policies(), env.agent_ids, concurrent=concurrent, max_tokens=tokens
    )
    began = time.perf_counter()
    result = await play_episode(env.settings, decide, seed=0)
    return len(result.cycles) / (time.perf_counter() - began), result.parse_failures


async def main(pistons: int, cycles: int, tokens: int) -> None:
    config = PistonballConfig(
        num_pistons=pistons, max_cycles=cycles, random_drop=False, random_rotate=False
    )
    env = PistonballEnv(config)
    llm = LLMConfig.from_preset("local").model_copy(
        update={"max_concurrency": pistons, "temperature": 0.0}
    )
    client = LLMClient(llm, role="actor")
    await client.achat("", "Say hi.", max_tokens=2)  # load the model outside the timing
    rows = []
    for concurrent in (True, False):
        rate, failures = await cycles_per_second(env, client, concurrent=concurrent, tokens=tokens)
        rows.append((concurrent, rate, failures))
    print(f"Pistonball, {pistons} pistons, {cycles} cycles, max_tokens={tokens}, embedded model")
    print(f"{'requests per cycle':<22}{'cycles/s':>10}{'s/cycle':>10}{'unreadable':>12}")
    for concurrent, rate, failures in rows:
        label = "all at once" if concurrent else "one at a time"
        print(f"{label:<22}{rate:>10.3f}{1 / rate:>10.2f}{failures:>12}")
    print(f"speed-up from batching: {rows[0][1] / rows[1][1]:.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pistons", type=int, default=20)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=4)
    args = parser.parse_args()
    asyncio.run(main(args.pistons, args.cycles, args.tokens))
