"""LLM layer benchmarks (issue 2).

1. Aggregate tokens/s of the embedded model through ``LLMClient`` with 1 vs 8 concurrent
   requests, beside raw batched generation (``generate_batch`` and HF ``generate``) of the
   same prompts.
2. Per-call overhead of ``LLMClient`` against a local OpenAI-compatible HTTP server (an
   instant-answer stub in its own process) vs the bare ``openai`` async client.

3. ``--backends transformers,w16,ct2,...`` (issues 16 and 25): the engines side by side, each
   round a fresh process per engine in turn (so load drift hits all alike), all with the same
   torch threads (``--threads``): ``LLMClient`` tokens/s at 1 and 8 concurrent requests; the
   greedy answers on the check set (``langmarl.llm.local.engines.CHECK_SET``): how many are
   right, how many are identical to fp32's (``transformers``), and the share of fp32's tokens
   each reproduces before its first difference (``engines.agreement``).

Run: ``.venv/bin/python benchmarks/llm_local.py [--tokens 64] [--calls 300]``, or
``.venv/bin/python benchmarks/llm_local.py --backends transformers,w16,ct2 [--rounds 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

import openai
import torch
from machine_load import print_machine  # beside this script

from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.local.engine import shared_engine
from langmarl.llm.local.engines import CHECK_SET, agreement, passes_check
from langmarl.llm.local.generation import GenJob, generate_batch

TEST_QUESTION = "What is 2+3? Answer with a number."

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


def one_backend(name: str, tokens: int) -> None:
    """One round of one engine in this fresh process: print a JSON line with its rates, its
    threads and its greedy check-set answers (text and token ids)."""
    config = LLMConfig.from_preset("local")
    config.extra_params["engine"] = name
    client = LLMClient(config)
    client.chat("", "warm up", max_tokens=4)
    engine = shared_engine(None, config.model_string, name)  # the client's engine

    def rate(n: int) -> float:
        return asyncio.run(client_rate(client, n, tokens))

    outputs = []
    for question, _ in CHECK_SET:  # as LLMClient.complete asks, keeping the token ids
        prompt = engine.encode_chat([{"role": "user", "content": question}], 32)
        outputs.append(engine.submit(GenJob(prompt, 32, temperature=0.0)).result())
    # tests/llm/test_local_model.py's question, asked as it asks (an empty system prompt)
    test_answer = client.chat("", TEST_QUESTION, max_tokens=24, temperature=0.0)
    load = os.getloadavg()[0]
    one, eight = rate(1), rate(8)
    print(json.dumps({
        "one": one, "eight": eight, "load": load, "threads": engine.threads,
        "answers": [o.text for o in outputs], "tokens": [o.token_ids for o in outputs],
        "test": test_answer,
    }))  # fmt: skip


def where_they_part(ours: str, theirs: str) -> str:
    """Both answers from a little before their first differing character."""
    pairs = enumerate(zip(ours, theirs, strict=False))
    cut = next((i for i, (a, b) in pairs if a != b), min(len(ours), len(theirs)))
    start = max(cut - 20, 0)
    return f"...{ours[start : cut + 30]!r} (fp32 ...{theirs[start : cut + 30]!r})"


def compare_backends(names: list[str], tokens: int, rounds: int, threads: int) -> None:
    """Rounds of fresh processes, one per engine in turn; medians and ratios to the first,
    answers against ``transformers`` (fp32) if it ran, else against the first."""
    print(f"engines side by side: {tokens} greedy tokens per request, {threads} threads, "
          f"median of {rounds} rounds; load average {os.getloadavg()}")  # fmt: skip
    runs: dict[str, list[dict]] = {name: [] for name in names}
    for _ in range(rounds):
        for name in names:
            command = [sys.executable, __file__, "--one-backend", name, "--tokens", str(tokens)]
            env = {**os.environ, "LANGMARL_TORCH_THREADS": str(threads)}
            out = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
            runs[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    used = {r["threads"] for name in names for r in runs[name]}
    if used != {threads}:
        raise RuntimeError(f"engines ran with {sorted(used)} threads, not {threads}")
    reference = "transformers" if "transformers" in runs else names[0]
    base_one = statistics.median(r["one"] for r in runs[names[0]])
    base_eight = statistics.median(r["eight"] for r in runs[names[0]])
    print(f"| engine | 1 request (tokens/s) | 8 concurrent (tokens/s) | check set right | "
          f"same as {reference} | token agreement | 2+3 test | load |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        one = statistics.median(r["one"] for r in runs[name])
        eight = statistics.median(r["eight"] for r in runs[name])
        first = runs[name][0]
        right = sum(
            passes_check(a, ok) for a, (_, ok) in zip(first["answers"], CHECK_SET, strict=True)
        )
        same, share = agreement(first["tokens"], runs[reference][0]["tokens"])
        test = "5" if passes_check(first["test"], ("5",)) else "missed"
        loads = [r["load"] for r in runs[name]]
        print(f"| {name} | {one:.1f} ({one / base_one:.2f}x) | {eight:.1f} "
              f"({eight / base_eight:.2f}x) | {right}/{len(CHECK_SET)} | {same}/{len(CHECK_SET)} "
              f"| {share:.1%} | {test} | {min(loads):.2f}-{max(loads):.2f} |")  # fmt: skip
    for name in names:
        first, fp32 = runs[name][0], runs[reference][0]
        differing = [
            f"{q!r}: {where_they_part(a, r)}"
            for (q, _), a, r in zip(CHECK_SET, first["answers"], fp32["answers"], strict=True)
            if a != r
        ]
        print(f"{name}: 2+3 test {first['test'][:50]!r}; differs from {reference} on "
              f"{len(differing)}")  # fmt: skip
        for line in differing:
            print(f"    {line}")
    print(f"load average after: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--raw", action="store_true", help="only the bare-generation rates")
    parser.add_argument("--backends", help="comma-separated engines to compare (issue 16)")
    parser.add_argument("--one-backend", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if args.one_backend:
        one_backend(args.one_backend, args.tokens)
        return
    if args.backends:
        compare_backends(args.backends.split(","), args.tokens, args.rounds, args.threads)
        return
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
    print_machine()
    main()
