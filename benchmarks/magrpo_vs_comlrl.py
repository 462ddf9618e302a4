"""Seconds per MAGRPO training step: langmarl vs comlrl 1.4.3, side by side.

Same model (SmolLM2-135M-Instruct, fp32, from langmarl's cached safetensors copy), same task
(cooperative writing: summary + expansion, length-ratio reward), N=2 agents, G=4, align mode,
max_new_tokens=32, same sampling settings and thread count, T=1 and T=2 (plain revision
prompts between turns). One step = one rollout tree for one example + one update of every
agent. Each library runs in its own worker process (comlrl in its own venv, installed by
``--setup``: torch==2.13.0 first, then comlrl==1.4.3); the two alternate per setting.

    python benchmarks/magrpo_vs_comlrl.py --setup          # create the comlrl venv once
    python benchmarks/magrpo_vs_comlrl.py --steps 3        # run and print the table
    python benchmarks/magrpo_vs_comlrl.py --threads 1 --variants comlrl,ours-sequential

Each library gets the whole machine by default (``--threads``: all cores): comlrl through
torch's intra-op threads, langmarl with its agents' rollouts sampled on parallel threads
(``parallel_agents``, the default); the other variants (``VARIANTS``) show what each choice
costs or gains, ``ours-sequential`` being one agent after the other as comlrl does it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from machine_load import print_machine  # beside this script

VENV = Path(os.environ.get("COMLRL_VENV", "/tmp/langmarl-bench/comlrl-venv"))
TOPICS = ["the ocean", "a rainy day", "coffee", "the moon", "a library", "mountains", "bread"]
SUMMARY = "Write a one-sentence summary about: {topic}"
EXPANSION = "Write a detailed paragraph of several sentences about: {topic}"
REVISE = "{prompt}\n\nYour previous answer:\n{response}\n\nRevise your answer and improve it."
SPLIT: list[tuple[float, float]] = []
"""langmarl's (rollout, update) seconds per measured step, reported beside the wall time."""
VARIANTS = (
    "comlrl",
    "ours",
    "ours-parallel-updates",
    "ours-sequential",
    "ours-lora",
    "ours-fp32",
    "ours-bf16",
    "ours-w16",
    "ours-int8",
    "ours-fp32-update",
)
"""``ours``: the defaults (agents sampled on parallel threads when torch has several, updates
one after the other, ``sampling_precision="auto"``: bf16 where the CPU has native bf16, else
fp32); ``ours-parallel-updates``: updates in parallel too (``parallel_updates=True``);
``ours-sequential``: one agent after the other, each using all threads; ``ours-lora``: LoRA r=16;
``ours-fp32`` / ``ours-bf16`` / ``ours-w16`` / ``ours-int8``: ``ours`` sampling from the fp32
model itself / a bf16 / fp16-weight / int8 copy of each agent. (Before issue 37 ``ours``
sampled in fp32, which ``ours-fp32`` is now.) ``ours-fp32-update``: ``ours`` with its
update in fp32 (``update_precision="fp32"``; the default ``auto`` autocasts it to bf16 where
the CPU has native bf16)."""
PRECISIONS = {"ours-fp32": "fp32", "ours-bf16": "bf16", "ours-w16": "w16", "ours-int8": "int8"}
"""The variants that name their sampling precision; the others keep the default (``auto``)."""
SETTINGS = {"G": 4, "max_new_tokens": 32, "temperature": 0.8, "top_p": 0.95, "lr": 1e-5}


def ratio_reward(summary: str, expansion: str) -> float:
    """The length-ratio reward (same formula as langmarl.magrpo.tasks.length_ratio_reward)."""
    short, long = len(summary.split()), len(expansion.split())
    if short == 0 or long == 0:
        return 0.0
    ratio = long / short
    return ratio / 2.0 if ratio < 2.0 else (1.0 if ratio <= 3.0 else max(0.0, 2.0 - ratio / 3.0))


def transition(
    prompt,
    agent_completions,
    num_agents,
    prompt_history_per_agent=None,
    response_history_per_agent=None,
):
    """Next-turn prompts: each agent's last prompt plus its answer and a revision request."""
    last = [h[-1] if h else prompt for h in (prompt_history_per_agent or [[prompt]] * num_agents)]
    return [REVISE.format(prompt=last[i], response=agent_completions[i]) for i in range(num_agents)]


def load(model_dir: str):
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    config = AutoConfig.from_pretrained(model_dir)
    if getattr(config, "quantization_config", None):
        del config.quantization_config
    models = [AutoModelForCausalLM.from_pretrained(model_dir, config=config) for _ in range(2)]
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return models, tokenizer


def examples() -> list[dict[str, str]]:
    return [{"prompt": topic, "topic": topic} for topic in TOPICS]


def worker_ours(
    model_dir: str, turns: int, steps: int, variant: str = "ours", threads: int | None = None
) -> list[tuple[float, float]]:
    from langmarl.magrpo import LoRAConfig, MAGRPOConfig, MAGRPOTrainer

    models, tokenizer = load(model_dir)
    args = MAGRPOConfig(
        output_dir="/tmp/langmarl-bench/ours-run",
        num_generations=SETTINGS["G"],
        num_turns=turns,
        max_new_tokens=SETTINGS["max_new_tokens"],
        temperature=SETTINGS["temperature"],
        top_p=SETTINGS["top_p"],
        learning_rate=SETTINGS["lr"],
        use_chat_template=False,
        normalize_advantage=True,
        external_prompt_passthrough=True,
        lora=LoRAConfig(r=16, alpha=32) if variant == "ours-lora" else None,
        parallel_agents=variant != "ours-sequential",
        parallel_updates=variant == "ours-parallel-updates",
        sampling_precision=PRECISIONS.get(variant, "auto"),
        update_precision="fp32" if variant == "ours-fp32-update" else "auto",
        # comlrl's thread count, pinned: the default follows the cores free at each step,
        # which the load left by an earlier worker would lower
        num_threads=threads,
    )
    trainer = MAGRPOTrainer(
        models,
        lambda samples: [ratio_reward(*s.completions) for s in samples],
        args,
        tokenizers=[tokenizer, tokenizer],
        formatters=[lambda e: SUMMARY.format(**e), lambda e: EXPANSION.format(**e)],
        train_dataset=examples(),
        external_transition=transition if turns > 1 else None,
    )
    times = []
    for step in range(steps + 1):  # the first step is a warm-up
        started = (time.perf_counter(), time.process_time())
        metrics = trainer.training_step([examples()[step % len(TOPICS)]])
        times.append((time.perf_counter() - started[0], time.process_time() - started[1]))
        SPLIT.append((metrics["rollout_seconds"], metrics["update_seconds"]))
    del SPLIT[0]
    return times[1:]


def worker_comlrl(model_dir: str, turns: int, steps: int) -> list[tuple[float, float]]:
    from comlrl.trainers.reinforce.magrpo import MAGRPOConfig, MAGRPOTrainer
    from datasets import Dataset

    models, tokenizer = load(model_dir)
    args = MAGRPOConfig(
        num_train_epochs=1,
        agent_learning_rate=SETTINGS["lr"],
        num_agents=2,
        num_generations=SETTINGS["G"],
        max_new_tokens=SETTINGS["max_new_tokens"],
        temperature=SETTINGS["temperature"],
        top_p=SETTINGS["top_p"],
        top_k=None,
        num_turns=turns,
        discount=0.9,
        joint_mode="aligned",
        early_termination_threshold=None,
        external_prompt_passthrough=True,
        eval_interval=0,
        rollout_buffer_size=1,
        logging_steps=1000,
    )

    def reward(summaries, expansions):
        return [ratio_reward(s, e) for s, e in zip(summaries, expansions, strict=True)]

    trainer = MAGRPOTrainer(
        agents=models,
        num_agents=2,
        tokenizer=tokenizer,
        train_dataset=Dataset.from_list(examples()),
        reward_func=reward,
        formatters=[lambda e: SUMMARY.format(**e), lambda e: EXPANSION.format(**e)],
        external_transition=transition if turns > 1 else None,
        args=args,
    )
    for agent in trainer.agents:
        agent.train()
    times = []
    for step in range(steps + 1):
        started = (time.perf_counter(), time.process_time())
        trainer._train_step_returns(examples()[step % len(TOPICS)])
        trainer._drain_ready_buffers([i for i, b in enumerate(trainer.rollout_buffers) if b])
        times.append((time.perf_counter() - started[0], time.process_time() - started[1]))
    return times[1:]


def run_worker(args: argparse.Namespace) -> None:
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.worker == "comlrl":
        measured = worker_comlrl(args.model_dir, args.turns, args.steps)
    else:
        measured = worker_ours(args.model_dir, args.turns, args.steps, args.worker, args.threads)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {"times": [w for w, _ in measured], "cpu_times": [c for _, c in measured]}
    print("@@RESULT@@" + json.dumps({**result, "peak_mb": peak_mb, "split": SPLIT}))


def setup() -> None:
    if not (VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = [str(VENV / "bin" / "pip"), "install", "-q"]
    subprocess.run([*pip, "torch==2.13.0"], check=True)  # first, so comlrl cannot pull another
    subprocess.run([*pip, "comlrl==1.4.3", "gguf"], check=True)


def measure(who: str, python: str, model_dir: str, turns: int, steps: int, threads: int) -> dict:
    command = [python, __file__, "--worker", who, "--model-dir", model_dir, "--turns", str(turns)]
    command += ["--steps", str(steps), "--threads", str(threads)]
    env = (
        {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        if who != "comlrl"
        else None
    )
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    marker = done.stdout.rfind("@@RESULT@@")
    if marker < 0:
        return {"error": (done.stderr or done.stdout)[-1500:]}
    return json.loads(done.stdout[marker + len("@@RESULT@@") :])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--setup", action="store_true", help="Create the comlrl venv and exit.")
    parser.add_argument("--worker", choices=VARIANTS)
    parser.add_argument("--model-dir")
    parser.add_argument("--turns", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count(), help="torch threads (default: all cores)"
    )
    parser.add_argument(
        "--variants",
        default="comlrl,ours,ours-parallel-updates,ours-sequential,ours-bf16,ours-lora",
        help=f"Comma-separated, in order, from {', '.join(VARIANTS)}.",
    )
    args = parser.parse_args()
    if args.setup:
        setup()
        return
    if args.worker:
        args.turns = args.turns[0]
        run_worker(args)
        return
    from langmarl.llm.local.weights import ensure_converted

    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"--variants: unknown {unknown}; choose from {', '.join(VARIANTS)}")
    model_dir = str(ensure_converted())
    comlrl_python = str(VENV / "bin" / "python")
    print(
        f"N=2 G={SETTINGS['G']} max_new_tokens={SETTINGS['max_new_tokens']} threads={args.threads}"
    )
    print(f"load: {os.getloadavg()}")
    print("| T | library | wall s/step (each) | CPU s/step | rollout / update s | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for turns in args.turns:
        results = {}
        for who in variants:
            python = comlrl_python if who == "comlrl" else sys.executable
            result = measure(who, python, model_dir, turns, args.steps, args.threads)
            if "error" in result:
                print(f"| {turns} | {who} | failed: {result['error']!r} | | | |")
                continue
            results[who] = result
            print(f"| {turns} | {who} | {_row(result)} |")
            sys.stdout.flush()
        base = results.get("comlrl")
        for who, result in results.items():
            if base is None or who == "comlrl":
                continue
            speed = base["mean"] / result["mean"]
            cpu_speed = base["cpu"] / max(result["cpu"], 1e-9)
            memory = result["peak_mb"] / base["peak_mb"]
            print(
                f"| {turns} | comlrl / {who} | **{speed:.2f}x** | {cpu_speed:.2f}x | | "
                f"{memory:.2f}x memory |"
            )
        sys.stdout.flush()
    print(f"load after: {os.getloadavg()}")


def _row(result: dict) -> str:
    """One table row's cells (and the means kept on ``result`` for the ratios)."""
    times = result["times"]
    result["mean"] = sum(times) / len(times)
    result["cpu"] = sum(result["cpu_times"]) / len(times)
    each = ", ".join(f"{t:.1f}" for t in times)
    split = result.get("split") or []
    parts = (
        f"{sum(r for r, _ in split) / len(split):.1f} / {sum(u for _, u in split) / len(split):.1f}"
        if split
        else ""
    )
    return (
        f"{result['mean']:.1f} ({each}) | {result['cpu']:.1f} | {parts} | {result['peak_mb']:.0f}"
    )


if __name__ == "__main__":
    print_machine()
    main()
