"""Pistonball cycles/s on the embedded model: a cycle's N requests at once vs one at a time.

Every cycle each of N pistons asks the LLM for its move. ``PistonballEnv`` sends a cycle's N
requests together (``asyncio.gather``) and the embedded engine batches them into one
``generate`` call; the baseline sends them one after another. One seeded episode alternates
the two cycle by cycle (odd cycles batched, even ones one at a time), so both see the same
machine load, which on a shared machine changes more between runs than between the modes.
A warm-up call loads the model first. Cycles/s counts the LLM calls and the physics step.

Run: ``.venv/bin/python benchmarks/pistonball.py [--pistons 20] [--cycles 6] [--tokens 4]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from machine_load import print_machine  # beside this script

from langmarl.config.envs import PistonballConfig
from langmarl.envs.pistonball.env import PistonballEnv
from langmarl.envs.pistonball.episode import Decide, llm_decider, play_episode
from langmarl.envs.pistonball.physics import PhysicsState
from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig


def alternating(
    env: PistonballEnv, client: LLMClient, tokens: int, seconds: dict[bool, list[float]]
) -> Decide:
    """Odd cycles batched, even cycles one request at a time; the wall time of each
    cycle's decisions is appended to ``seconds[batched]``."""
    policies, ids = env.default_policies(), env.agent_ids
    modes = {
        batched: llm_decider(client, policies, ids, concurrent=batched, max_tokens=tokens)
        for batched in (True, False)
    }

    async def decide(cycle: int, observations: list[str], state: PhysicsState) -> list[str]:
        batched = cycle % 2 == 1
        began = time.perf_counter()
        replies = await modes[batched](cycle, observations, state)
        seconds[batched].append(time.perf_counter() - began)
        return replies

    return decide


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
    client.tracker.reset()
    seconds: dict[bool, list[float]] = {True: [], False: []}
    started = time.perf_counter()
    result = await play_episode(env.settings, alternating(env, client, tokens, seconds), seed=0)
    physics = (time.perf_counter() - started - sum(map(sum, seconds.values()))) / len(result.cycles)
    prompt_tokens = client.tracker.get_stats()["input_tokens"] / max(1, client.tracker.calls)
    print(
        f"Pistonball, {pistons} pistons, {len(result.cycles)} cycles alternating, "
        f"max_tokens={tokens}, ~{prompt_tokens:.0f} prompt tokens per request, embedded model"
    )
    print(f"{'requests per cycle':<22}{'cycles/s':>10}{'s/cycle':>10}")
    rates = {}
    for batched in (True, False):
        per_cycle = statistics.mean(seconds[batched]) + physics
        rates[batched] = 1 / per_cycle
        label = "all at once" if batched else "one at a time"
        print(f"{label:<22}{rates[batched]:>10.3f}{per_cycle:>10.2f}")
    print(f"speed-up from batching: {rates[True] / rates[False]:.1f}x")
    print(f"unreadable replies: {result.parse_failures} of {pistons * len(result.cycles)}")


if __name__ == "__main__":
    print_machine()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pistons", type=int, default=20)
    parser.add_argument("--cycles", type=int, default=6)
    parser.add_argument("--tokens", type=int, default=4)
    args = parser.parse_args()
    asyncio.run(main(args.pistons, args.cycles, args.tokens))
