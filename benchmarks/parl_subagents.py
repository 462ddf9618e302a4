"""PARL benchmark (issue 7): sub-agents run concurrently vs one after another.

Executes the same plans with the embedded model twice, side by side: once as the
environment does (every sub-agent of a plan started together with ``asyncio.gather``, so the
local engine batches them) and once serially (each sub-agent awaited before the next).
Prints wall time of each, their ratio, and the trace's critical vs serial steps.

Run: ``.venv/bin/python benchmarks/parl_subagents.py [--subagents 4] [--tokens 16] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import time

import torch
from machine_load import print_machine  # beside this script

from langmarl.envs.parallel.runner import EpisodeSettings, run_stage, run_subagent
from langmarl.envs.parallel.tasks import arithmetic_tasks
from langmarl.llm import LLMClient, LLMConfig


async def timed_stage(client: LLMClient, task, subtasks, settings, parallel: bool) -> float:
    began = time.perf_counter()
    if parallel:
        await run_stage(client, subtasks, task, settings, time.perf_counter)
    else:
        for i, subtask in enumerate(subtasks):
            await run_subagent(
                client, f"subagent_{i + 1}", subtask, task, settings, time.perf_counter
            )
    return time.perf_counter() - began


async def main(subagents: int, tokens: int, repeats: int) -> None:
    torch.set_num_threads(2)
    client = LLMClient(LLMConfig.from_preset("local"), role="subagent")
    settings = EpisodeSettings(max_subagent_steps=1, subagent_max_tokens=tokens)
    task = arithmetic_tasks(1, parts=(subagents, subagents), seed=7)[0]
    subtasks = [part.question for part in task.parts]
    await timed_stage(client, task, subtasks[:1], settings, parallel=True)  # load the model
    serial, parallel = [], []
    for _ in range(repeats):  # interleaved, so load changes hit both sides alike
        serial.append(await timed_stage(client, task, subtasks, settings, parallel=False))
        parallel.append(await timed_stage(client, task, subtasks, settings, parallel=True))
    s, p = min(serial), min(parallel)
    print(f"sub-agents per stage: {subagents}, max tokens per reply: {tokens}, repeats: {repeats}")
    print(f"serial   wall time: {s:6.2f} s (best of {repeats})")
    print(f"parallel wall time: {p:6.2f} s (best of {repeats})")
    print(f"wall-time speed-up: {s / p:.2f}x")
    print(f"steps: critical {1 + 1 + 1}, serial {1 + subagents + 1} (plan, sub-agents, combine)")


if __name__ == "__main__":
    print_machine()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--subagents", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(main(args.subagents, args.tokens, args.repeats))
