"""The embedded model's greedy answers on each engine, and on another CPU model (issue 37).

Asks the check set (``langmarl.llm.local.engines.CHECK_SET``, 32 tokens) and two 2+3
prompts as one batch of each engine (fp32 ``transformers``, ``w16``, ``ct2``); prints how
many check-set answers are right, the 2+3 answers, and how many answers are fp32's token for
token (``engines.agreement``). No speeds: this is about numerics (``llm_local.py --backends``
measures the engines' speeds beside the same counts, in subprocesses that an emulation does not
reach).

``--cpu MODEL`` runs the same under ``qemu-x86_64 -cpu MODEL`` (Debian's ``qemu-user``):
the libraries then choose their kernels from the emulated CPU's ``cpuid``, as on that CPU —
``EPYC-Rome`` is an AVX2-only AMD EPYC, which the kernel caps of ``busy_machine.py --isa
avx2`` only approximate (fbgemm, behind ``w16``, reads ``cpuid`` and ignores them). The
emulation runs ~40× slower than the host (~2,900 CPU-s, about 25 minutes alone on 2 cores);
``/proc/cpuinfo`` still shows the host's flags, so the CPU line printed is torch's view.

Run: ``.venv/bin/python benchmarks/engine_answers.py [--cpu EPYC-Rome]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

from langmarl.llm.local.engines import EngineKind

ENGINES: tuple[EngineKind, ...] = ("transformers", "w16", "ct2")
PROMPTS = ("What is 2+3?", "What is 2+3? Answer with a number.")
"""The issue's prompt and ``tests/llm/test_local_model.py``'s."""


def answers(kind: EngineKind, threads: int) -> tuple[list[list[int]], list[str], float]:
    """``kind``'s greedy token ids and texts for the check set then :data:`PROMPTS`, and the
    CPU-seconds it took."""
    from langmarl.llm.local.engine import LocalEngine
    from langmarl.llm.local.engines import CHECK_SET
    from langmarl.llm.local.generation import GenJob

    started = time.process_time()
    engine = LocalEngine(engine_kind=kind, batch_window=0.5, threads=threads).start()
    asked = [(q, 32) for q, _ in CHECK_SET] + [(q, 24) for q in PROMPTS]
    futures = [
        engine.submit(
            GenJob(engine.encode_chat([{"role": "user", "content": q}], 32), n, temperature=0.0)
        )
        for q, n in asked
    ]
    outputs = [future.result() for future in futures]
    engine.close()
    return [o.token_ids for o in outputs], [o.text for o in outputs], time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cpu", help="a qemu-x86_64 CPU model, e.g. EPYC-Rome")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.cpu:
        qemu = shutil.which("qemu-x86_64")
        if qemu is None:
            sys.exit("--cpu needs qemu-x86_64: apt-get install qemu-user")
        command = [qemu, "-cpu", args.cpu, sys.executable, __file__, "--threads", str(args.threads)]
        os.execv(qemu, command)

    import torch

    from langmarl.llm.local.engines import CHECK_SET, agreement, passes_check

    torch.set_num_threads(args.threads)
    print(f"torch's CPU capability: {torch.backends.cpu.get_cpu_capability()}", flush=True)
    tokens = {}
    for kind in ENGINES:
        tokens[kind], texts, cpu_s = answers(kind, args.threads)
        checked = zip(texts, CHECK_SET, strict=False)  # the PROMPTS' answers follow
        right = sum(passes_check(text, ok) for text, (_, ok) in checked)
        said = " | ".join(repr(text) for text in texts[len(CHECK_SET) :])
        print(f"{kind}: {right}/{len(CHECK_SET)} right; 2+3: {said}; {cpu_s:.0f} CPU-s", flush=True)
    for kind in ENGINES[1:]:
        same, share = agreement(tokens[kind], tokens["transformers"])
        print(f"{kind}: {same}/{len(tokens[kind])} answers are fp32's token for token "
              f"({share:.1%} of fp32's tokens before the first difference)")  # fmt: skip


if __name__ == "__main__":
    main()
