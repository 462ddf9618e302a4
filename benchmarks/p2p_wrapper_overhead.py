"""Reward-space throughput: the custom reward wrapper's overhead, and configs x seeds scaling.

1. PPO (SB3, DummyVecEnv + VecNormalize, torch 1 thread) env steps/s on HalfCheetah-v5 with
   the CustomRewardWrapper (a two-term reward read from ``info``) vs the env's own reward, same
   seeds, interleaved A/B repeats; plus raw env.step throughput with and without the wrapper.
2. ``train_runs`` wall time for 1, 2 and 4 runs (configs x seeds) with ``max_parallel=2``.

Run: ``python benchmarks/p2p_wrapper_overhead.py [--steps 8192] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from machine_load import print_machine  # beside this script

os.environ.setdefault("MUJOCO_GL", "egl")

REWARD = '''
def reward_fn(obs, action, next_obs, info):
    """Forward progress minus control cost (the env's own terms).
    LaTeX: r = r_{fwd} + r_{ctrl}
    Terms:
        forward: forward reward
        ctrl: control cost
    """
    forward = float(info["reward_forward"])
    ctrl = float(info["reward_ctrl"])
    return forward + ctrl, {"forward": forward, "ctrl": ctrl}
'''


def ppo_steps_per_second(reward: str | None, steps: int, seed: int) -> tuple[float, float]:
    """PPO learn() throughput with (``reward``) or without (None) the custom reward.

    Returns ``(steps per wall second, steps per CPU second of this process)``: on a shared
    machine the CPU-time rate is the one that compares like with like.
    """
    import torch

    from langmarl.p2p.learner.ppo_policy import build_ppo
    from langmarl.p2p.learner.sb3_trainer import build_vec_env
    from langmarl.p2p.learner.train_config import TrainConfig

    torch.set_num_threads(1)
    config = TrainConfig(total_timesteps=steps, num_steps=2048, seed=seed)
    venv = build_vec_env(config, reward)
    model = build_ppo(config, venv)
    started, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    venv.close()
    return model.num_timesteps / elapsed, model.num_timesteps / cpu


def env_steps_per_second(reward: str | None, steps: int) -> float:
    """Raw env.step throughput with random actions, per CPU second of this process."""
    from langmarl.p2p.learner.wrapper import make_reward_env
    from langmarl.p2p.reward.function import load_reward_source

    env = make_reward_env("HalfCheetah-v5", load_reward_source(reward) if reward else None)
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(steps)]
    started = time.process_time()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return steps / (time.process_time() - started)


def scaling(runs: int, steps: int) -> tuple[float, float]:
    """Wall time and aggregate env steps/s of ``runs`` InvertedPendulum runs, 2 at a time."""
    from langmarl.p2p.learner.executor import train_runs
    from langmarl.p2p.learner.train_config import TrainConfig
    from langmarl.p2p.session.records import IterationRecord

    pendulum = REWARD.replace('info["reward_forward"]', 'info["reward_survive"]').replace(
        'float(info["reward_ctrl"])', "0.0"
    )
    with tempfile.TemporaryDirectory() as tmp:
        reward = Path(tmp) / "reward_fn.py"
        reward.write_text(pendulum)
        config = TrainConfig.for_env(
            "InvertedPendulum-v5", total_timesteps=steps, num_evals=1, eval_episodes=1,
            record_video=False, max_episode_steps=200,
        )  # fmt: skip
        configs = [config, config.model_copy(update={"learning_rate": 1e-3})][: min(runs, 2)]
        seeds = list(range(1, runs // len(configs) + 1))
        started = time.perf_counter()
        result = train_runs(
            IterationRecord(Path(tmp) / "iter_1"), reward, configs, seeds, max_parallel=2
        )
        elapsed = time.perf_counter() - started
        if result.errors:
            raise RuntimeError(result.errors)
    return elapsed, runs * steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--scaling-steps", type=int, default=4096)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()}")
    raw: dict[str, list[float]] = {"own": [], "custom": []}
    for _ in range(5):  # interleaved, median of 5: the machine is shared
        raw["own"].append(env_steps_per_second(None, 20_000))
        raw["custom"].append(env_steps_per_second(REWARD, 20_000))
    raw_plain, raw_custom = statistics.median(raw["own"]), statistics.median(raw["custom"])
    print(
        f"env.step per CPU s (median of 5): own reward {raw_plain:.0f}, custom reward "
        f"{raw_custom:.0f}, ratio {raw_custom / raw_plain:.3f}"
    )
    plain, custom = [], []
    for repeat in range(args.repeats):
        plain.append(ppo_steps_per_second(None, args.steps, seed=repeat))
        custom.append(ppo_steps_per_second(REWARD, args.steps, seed=repeat))
        print(
            f"PPO repeat {repeat}: own {plain[-1][0]:.0f}/s wall {plain[-1][1]:.0f}/CPU s, "
            f"custom {custom[-1][0]:.0f}/s wall {custom[-1][1]:.0f}/CPU s"
        )
    for label, index in (("wall", 0), ("CPU", 1)):
        own = statistics.mean(p[index] for p in plain)
        mine = statistics.mean(c[index] for c in custom)
        print(
            f"PPO env steps per {label} s: own {own:.0f}, custom {mine:.0f}, ratio {mine / own:.3f}"
        )
    own_cpu = statistics.mean(p[1] for p in plain)
    extra_us = 1e6 * (1 / raw_custom - 1 / raw_plain)
    print(
        f"wrapper cost {extra_us:.1f} us/step = {extra_us * own_cpu / 1e4:.2f}% of a PPO step "
        f"at {own_cpu:.0f} steps/CPU s"
    )
    for runs in (1, 2, 4):
        elapsed, rate = scaling(runs, args.scaling_steps)
        print(
            f"train_runs {runs} run(s) x {args.scaling_steps} steps, max_parallel=2: "
            f"{elapsed:.1f}s wall, {rate:.0f} env steps/s total"
        )
    print(f"load: {os.getloadavg()}")


if __name__ == "__main__":
    print_machine()
    main()
