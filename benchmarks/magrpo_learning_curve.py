"""Learning check: MAGRPO on cooperative writing (length-ratio reward), mean reward per step.

Two SmolLM2-135M agents (summary, expansion), N=2, G=4, T=1, 20 steps, reward 1.0 when the
expansion is 4-6x as long as the summary (in words); writes the curve to
``benchmarks/magrpo_learning_curve.png`` and the numbers to ``…/magrpo_learning_curve.json``.

    python benchmarks/magrpo_learning_curve.py --steps 20
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from machine_load import print_machine  # beside this script

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    from langmarl.magrpo import MAGRPOConfig, MAGRPOTrainer
    from langmarl.magrpo.tasks import get_task, length_ratio_reward

    task = get_task("writing", num_eval=2)
    config = MAGRPOConfig(
        output_dir="/tmp/langmarl-bench/curve-run",
        num_generations=4,
        num_turns=1,
        max_new_tokens=48,
        temperature=1.0,
        learning_rate=args.lr,
        max_steps=args.steps,
        num_train_epochs=args.steps,
        num_threads=args.threads,
        seed=1,
    )

    def reward(samples):  # a band the untrained pair rarely hits: expansion 4-6x the summary
        return [length_ratio_reward(*s.completions[:2], low=4.0, high=6.0) for s in samples]

    trainer = MAGRPOTrainer(
        ["smollm2", "smollm2"],
        reward,
        config,
        formatters=task.formatters,
        train_dataset=task.train_dataset,
    )
    rewards = []
    for _ in range(args.steps):
        metrics = trainer.training_step(trainer.batch_for(trainer.step))
        trainer.step += 1
        rewards.append(metrics["reward_mean"])
        print(f"step {trainer.step}: reward {metrics['reward_mean']:.3f}", flush=True)
    (HERE / "magrpo_learning_curve.json").write_text(json.dumps({"reward_mean": rewards}))
    plot(rewards, HERE / "magrpo_learning_curve.png")
    half = len(rewards) // 2
    first, last = sum(rewards[:half]) / half, sum(rewards[half:]) / (len(rewards) - half)
    print(f"mean reward first half {first:.3f}, second half {last:.3f}")


def plot(rewards: list[float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = list(range(1, len(rewards) + 1))
    window = 5
    smooth = [
        sum(rewards[max(0, i - window + 1) : i + 1]) / len(rewards[max(0, i - window + 1) : i + 1])
        for i in range(len(rewards))
    ]
    figure, axis = plt.subplots(figsize=(6, 3.5))
    axis.plot(steps, rewards, "o-", alpha=0.4, label="mean reward per step")
    axis.plot(steps, smooth, "-", linewidth=2, label=f"running mean ({window})")
    axis.set_xlabel("training step")
    axis.set_ylabel("length-ratio reward")
    axis.set_title("MAGRPO, 2× SmolLM2-135M, writing task (G=4, T=1)")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)


if __name__ == "__main__":
    print_machine()
    main()
