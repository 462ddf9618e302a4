"""LLM layer benchmarks (issue 2).

1. Aggregate tokens/s of the embedded model through ``LLMClient`` with 1 vs 8 concurrent
   requests, beside raw batched generation (``generate_batch`` and HF ``generate``) of the
   same prompts.
2. Per-call overhead of ``LLMClient`` against a local OpenAI-compatible HTTP server (an
   instant-answer stub in its own process) vs the bare ``openai`` async client.

Run: ``.venv/bin/python benchmarks/llm_local.py [--tokens 64] [--calls 300]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time

import openai
import torch

from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.local.generation import GenJob, generate_batch

PROMPTS = [
    f"Write a long story about a robot named Unit {i} who learns to paint." for i in range(8)
]


async def client_rate(client: LLMClient, concurrency: int, tokens: int) -> float:
    messages = [[{"role": "user", "content": p}] for p in PROMPTS[:concurrency]]
    began = time.perf_counter()
    results = await asyncio.gather(
        *[client.acomplete(m, max_tokens=tokens, temperature=0.0) for m in messages]
    )
    return sum(r.output_tokens for r in results) / (time.perf_counter() - began)


def raw_rates(tokens: int, rounds: int) -> None:
    """Single and batch-8 rates of bare ``generate_batch`` and HF ``generate``, measured in a
    fresh process whose main thread loads and runs the model (no engine, no other thread
    using torch), median of ``rounds``."""
    from langmarl.llm.local.weights import load_model

    model, tokenizer = load_model()
    prompts = []
    for text in PROMPTS:
        encoded = tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True
        )
        prompts.append(list(encoded["input_ids"] if hasattr(encoded, "keys") else encoded))

    def ours(n: int) -> float:
        began = time.perf_counter()
        jobs = [GenJob(p, tokens, temperature=0.0) for p in prompts[:n]]
        outputs = generate_batch(model, tokenizer, jobs)
        return sum(len(o.token_ids) for o in outputs) / (time.perf_counter() - began)

    def hf(n: int) -> float:
        ids = torch.nn.utils.rnn.pad_sequence(
            [torch.tensor(p[::-1]) for p in prompts[:n]], batch_first=True, padding_value=2
        ).flip(1)
        began = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(
                input_ids=ids, attention_mask=(ids != 2).long(), max_new_tokens=tokens,
                do_sample=False,
            )  # fmt: skip
        return int((out[:, ids.shape[1] :] != 2).sum()) / (time.perf_counter() - began)

    ours(1)  # warm-up
    for name, rate in (("raw generate_batch", ours), ("raw HF generate", hf)):
        one = statistics.median(rate(1) for _ in range(rounds))
        eight = statistics.median(rate(8) for _ in range(rounds))
        print(f"  {name + ', 1 / batch 8:':34s} {one:6.1f} / {eight:6.1f} tokens/s "
              f"({eight / one:.2f}x)")  # fmt: skip


def throughput(tokens: int, rounds: int) -> None:
    config = LLMConfig.from_preset("local")
    client = LLMClient(config)
    client.chat("", "warm up", max_tokens=4)
    singles, eights = [], []
    for _ in range(rounds):
        singles.append(asyncio.run(client_rate(client, 1, tokens)))
        eights.append(asyncio.run(client_rate(client, 8, tokens)))
    one, eight = statistics.median(singles), statistics.median(eights)
    print(f"embedded model, greedy, {tokens} new tokens per request, median of {rounds}")
    print(f"  LLMClient, 1 request:        {one:7.1f} tokens/s")
    print(f"  LLMClient, 8 concurrent:     {eight:7.1f} tokens/s  ({eight / one:.2f}x)")
    print("bare generation in a fresh process (same prompts, same settings):", flush=True)
    command = [sys.executable, __file__, "--raw", "--tokens", str(tokens)]
    subprocess.run([*command, "--rounds", str(rounds)], check=True)


async def per_call(call: object, calls: int) -> float:
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        await call()  # type: ignore[operator]
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


async def overhead(base_url: str, calls: int) -> None:
    bare = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
    config = LLMConfig(name="stub", model_string="ok", base_url=base_url, api_key="k")
    ours = LLMClient(config)
    messages = [{"role": "user", "content": "hi"}]

    async def bare_call() -> None:
        await bare.chat.completions.create(model="ok", messages=messages, max_tokens=8)  # type: ignore[arg-type]

    async def our_call() -> None:
        await ours.acomplete(messages, max_tokens=8)

    await per_call(bare_call, 50)  # warm both connection pools
    await per_call(our_call, 50)
    bare_ms, our_ms = [], []
    for _ in range(5):  # interleave blocks so drift hits both alike
        bare_ms.append(await per_call(bare_call, calls // 5))
        our_ms.append(await per_call(our_call, calls // 5))
    b, o = statistics.median(bare_ms), statistics.median(our_ms)
    print(f"per-call latency against a local stub server, median of {calls} calls each")
    print(f"  bare openai.AsyncOpenAI: {b:6.3f} ms")
    print(f"  LLMClient:               {o:6.3f} ms  (overhead {o - b:+.3f} ms)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--raw", action="store_true", help="only the bare-generation rates")
    args = parser.parse_args()
    if args.raw:
        raw_rates(args.tokens, args.rounds)
        return
    print(f"load average: {os.getloadavg()}, torch threads {torch.get_num_threads()}")
    throughput(args.tokens, args.rounds)
    stub = subprocess.Popen(
        [sys.executable, "-m", "langmarl.testing.openai_stub"], stdout=subprocess.PIPE, text=True
    )
    try:
        base_url = stub.stdout.readline().strip() if stub.stdout else ""
        asyncio.run(overhead(base_url, args.calls))
    finally:
        stub.terminate()
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
