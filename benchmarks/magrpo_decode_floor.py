"""Where a MAGRPO rollout's time goes on this CPU: the cost of one decode step of
SmolLM2-135M (batch = G = 4, one torch thread) in fp32 and bf16, beside the same decode loop
on a model with SmolLM2's 30 layers but tiny matrices (the Python/HF overhead alone).

It shows the floor under both langmarl's and comlrl's rollouts at the benchmark's settings.

Run: ``.venv/bin/python benchmarks/magrpo_decode_floor.py [--tokens 32] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import copy
import os
import time

import torch
from machine_load import print_machine  # beside this script
from transformers import AutoModelForCausalLM, AutoTokenizer

from langmarl.llm.local.sampling import Sampling
from langmarl.magrpo.generation import decode
from langmarl.magrpo.policy import embedded_model_dir

PROMPT = "Write a short summary of the ocean for a children's book. " * 3


def best_seconds(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor, tokens: int,
                 repeats: int) -> float:  # fmt: skip
    times = []
    for _ in range(repeats):
        torch.manual_seed(0)
        began = time.perf_counter()
        decode(model, ids, mask, 4, tokens, [-1], Sampling(False, 0.8, 0.95), pad_id=0)
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"load average: {os.getloadavg()}, torch threads 1, batch 4, {args.tokens} tokens")
    path = embedded_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    encoded = tokenizer([PROMPT], return_tensors="pt")
    ids, mask = encoded["input_ids"], encoded["attention_mask"]
    rows = {"SmolLM2-135M fp32": model, "SmolLM2-135M bf16": copy.deepcopy(model).bfloat16()}
    config = copy.deepcopy(model.config)
    config.update({"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 1,
                   "num_key_value_heads": 1, "head_dim": 64, "vocab_size": 512})  # fmt: skip
    tiny = type(model)(config).eval()
    for name, candidate in rows.items():
        seconds = best_seconds(candidate, ids, mask, args.tokens, args.repeats)
        print(f"  {name:34s} {seconds:6.2f} s  ({seconds / args.tokens * 1000:5.1f} ms/step)")
    seconds = best_seconds(tiny, ids % 512, mask, args.tokens, args.repeats)
    label = "30 layers, tiny matrices (overhead)"
    print(f"  {label:34s} {seconds:6.2f} s  ({seconds / args.tokens * 1000:5.1f} ms/step)")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    print_machine()
    main()
