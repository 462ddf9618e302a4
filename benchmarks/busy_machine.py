"""langmarl on a busy machine (issue 25): the load is made here, so the figure can be repeated.

``--busy N`` starts N processes that each spin one core (plain Python loops, default
priority) for the whole measurement, and samples the load average beside it.

- ``--isa avx2``: cap torch's, oneDNN's, MKL's and CTranslate2's kernels at AVX2 for what
  runs here (``langmarl.core.machine.KERNEL_CAPS``), to see an AVX2-only CPU's kernel choices
  and a lower bound of its times on a newer CPU (issue 37).
- ``run -- CMD ...``: time CMD beside the busy processes (e.g. ``python3 dev.py test`` at
  load 4: ``--busy 3``, the command's own work being the fourth).
- ``examples``: every quick example of the README and the docs (as
  ``tests/test_readme_examples.py`` runs them, in order, each in a copy of ``configs/``),
  first quiet, then beside the busy processes, one example after the other, so drift hits
  both alike; ``--quickstart`` adds the weight-space
  quickstart (``dev.py quickstart``'s training run) and ``--engine`` the embedded engine
  against plain transformers. Prints each duration, the busy/quiet ratio and the load.

Run: ``.venv/bin/python benchmarks/busy_machine.py --busy 2 examples --quickstart --engine``
or ``.venv/bin/python benchmarks/busy_machine.py --busy 3 run -- python3 dev.py test``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from machine_load import LoadSampler, print_machine  # beside this script

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SPIN = "while True: pass"


@contextlib.contextmanager
def busy(count: int) -> Iterator[None]:
    """``count`` processes spinning one core each, stopped on exit."""
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(count)]
    try:
        time.sleep(1.0 if count else 0.0)
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Run ``command``; its wall time and output. Raises if it fails."""
    began = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        output = done.stdout + done.stderr
        raise SystemExit(f"{' '.join(command)[:120]} failed:\n{output[-3000:]}")
    return seconds, done.stdout


def run_command(count: int, command: list[str]) -> None:
    with busy(count), LoadSampler() as load:
        began = time.perf_counter()
        code = subprocess.run(command, cwd=REPO).returncode
        seconds = time.perf_counter() - began
    print(f"busy_machine: {' '.join(command)} exited {code} after {seconds / 60:.1f} min "
          f"beside {count} busy processes; load average {load.summary()}")  # fmt: skip
    sys.exit(code)


def _workdir() -> Path:
    work = Path(tempfile.mkdtemp(prefix=".busy-", dir=REPO))  # not /tmp (see the README test)
    shutil.copytree(REPO / "configs", work / "configs")
    (work / ".venv").symlink_to(BIN.parent, target_is_directory=True)  # the blocks activate it
    return work


def _example_env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("OPENAI_API_KEY", None)
    env.pop("LANGMARL_TORCH_THREADS", None)  # what a reader's shell has: langmarl chooses
    return env


def blocks(quickstart: bool) -> list[tuple[str, list[str]]]:
    """(name, command) of every quick example of the README and the docs (each distinct block
    once), then the quickstart's training run."""
    from langmarl.testing.readme import Example, documented_examples

    quick: dict[str, Example] = {}
    for example in documented_examples(REPO):
        if example.kind == "quick":
            quick.setdefault(example.code, example)
    found = []
    for example in quick.values():
        shell = ["bash", "-e", "-c"] if example.language == "bash" else [sys.executable, "-c"]
        found.append((example.name, [*shell, example.code]))
    if quickstart:
        train = [str(BIN / "langmarl"), "magrpo", "train", "configs/magrpo/quickstart.json"]
        found.append(("quickstart (weights)", [*train, "--set", "run_id=qs"]))
    return found


def engine_rates(tokens: int) -> None:
    """In this fresh process: the engine's tokens/s (1 and 8 requests), then plain
    transformers' (HF ``generate``, torch's own thread default) in another fresh process."""
    sys.path.insert(0, str(Path(__file__).parent))
    from llm_local import client_rate

    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig

    client = LLMClient(LLMConfig.from_preset("local"))
    client.chat("", "warm up", max_tokens=4)
    rates = {f"engine {n}": asyncio.run(client_rate(client, n, tokens)) for n in (1, 8)}
    print(json.dumps(rates))


def plain_rates(tokens: int) -> None:
    """Plain transformers in this fresh process: HF ``generate`` at batch 1 and 8, fp32,
    torch's default threads (every core), as a user of transformers would run it."""
    import torch
    from transformers import AutoModelForCausalLM

    sys.path.insert(0, str(Path(__file__).parent))
    from llm_local import PROMPTS

    from langmarl.llm.local.weights import ensure_converted, load_model

    _, tokenizer = load_model()
    model = AutoModelForCausalLM.from_pretrained(ensure_converted(), torch_dtype=torch.float32)
    rates = {}
    for n in (1, 8):
        texts = [
            tokenizer.apply_chat_template(
                [{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False
            )
            for p in PROMPTS[:n]
        ]
        tokenizer.padding_side = "left"
        batch = tokenizer(texts, return_tensors="pt", padding=True)
        model.generate(**batch, max_new_tokens=4, do_sample=False)  # warm-up
        began = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(**batch, max_new_tokens=tokens, do_sample=False)
        new = out[:, batch["input_ids"].shape[1] :]
        rates[f"plain {n}"] = int((new != tokenizer.pad_token_id).sum()) / (
            time.perf_counter() - began
        )
    print(json.dumps(rates))


def engine_pair(tokens: int) -> dict[str, float]:
    env = _example_env()
    rates: dict[str, float] = {}
    for flag in ("--engine-rates", "--plain-rates"):
        _, out = timed([sys.executable, __file__, flag, "--tokens", str(tokens)], REPO, env)
        rates |= json.loads(out.strip().splitlines()[-1])
    return rates


def examples(count: int, quickstart: bool, engine: bool, tokens: int) -> None:
    quiet_dir, busy_dir = _workdir(), _workdir()
    env = _example_env()
    print(f"quick README examples quiet, then beside {count} busy processes; load average "
          f"now {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
    print("| block | quiet | busy | busy/quiet | load quiet | load busy |")
    print("|---|---|---|---|---|---|", flush=True)
    ratios = []
    try:
        for name, command in blocks(quickstart):
            with LoadSampler() as quiet_load:
                quiet, _ = timed(command, quiet_dir, env)
            with busy(count), LoadSampler() as busy_load:
                loaded, _ = timed(command, busy_dir, env)
            ratios.append(loaded / quiet)
            print(f"| {name} | {quiet:.1f} s | {loaded:.1f} s | {loaded / quiet:.2f}x | "
                  f"{quiet_load.summary()} | {busy_load.summary()} |", flush=True)  # fmt: skip
        print(f"worst busy/quiet {max(ratios):.2f}x, median {statistics.median(ratios):.2f}x")
        if engine:
            quiet_rates = engine_pair(tokens)
            with busy(count), LoadSampler() as load:
                busy_rates = engine_pair(tokens)
            print(f"engine vs plain transformers, {tokens} greedy tokens (busy load "
                  f"{load.summary()}):")  # fmt: skip
            for n in (1, 8):
                for label, rates in (("quiet", quiet_rates), ("busy", busy_rates)):
                    mine, plain = rates[f"engine {n}"], rates[f"plain {n}"]
                    print(f"  {n} request(s), {label}: engine {mine:.1f} tokens/s, plain "
                          f"{plain:.1f} tokens/s, ratio {mine / plain:.2f}x")  # fmt: skip
    finally:
        shutil.rmtree(quiet_dir, ignore_errors=True)
        shutil.rmtree(busy_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--busy", type=int, default=2, help="processes spinning one core each")
    parser.add_argument("--tokens", type=int, default=64)
    isa_help = "avx2: cap the kernels at AVX2 (an AVX2-only CPU's kernel choices)"
    parser.add_argument("--isa", choices=["native", "avx2"], default="native", help=isa_help)
    parser.add_argument("--engine-rates", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--plain-rates", action="store_true", help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="what")
    run = sub.add_parser("run", help="time a command beside the busy processes")
    run.add_argument("command", nargs=argparse.REMAINDER)
    ex = sub.add_parser("examples", help="README quick examples, quiet then busy")
    ex.add_argument("--quickstart", action="store_true")
    ex.add_argument("--engine", action="store_true")
    args = parser.parse_args()
    # SIGTERM (pkill, a job's cancel) unwinds like Ctrl-C, so the spinners are killed too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.isa == "avx2":  # before anything here loads torch; what runs from here inherits it
        from langmarl.core.machine import KERNEL_CAPS

        os.environ.update(KERNEL_CAPS)
    print_machine()
    if args.engine_rates:
        engine_rates(args.tokens)
    elif args.plain_rates:
        plain_rates(args.tokens)
    elif args.what == "run":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        run_command(args.busy, command)
    elif args.what == "examples":
        examples(args.busy, args.quickstart, args.engine, args.tokens)
    else:
        parser.print_help()


if __name__ == "__main__":
    main()
