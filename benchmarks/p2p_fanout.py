"""A reward-space session with 2 configs x 2 seeds per iteration: serial vs jobs, side by side.

The same session (InvertedPendulum-v5, a scripted LLM that always writes the same reward and
judges it 0.2, so every iteration trains; ``--iterations`` iterations of 4 PPO runs each, the
real sandboxed validator and confined executor processes) runs, in one invocation:

* serial: ``backend="process"``, ``max_parallel=1`` (one run after the other);
* local: ``backend="local"``: each run a job on the LocalBackend, pinned to one free core;
* ray: ``backend="ray"`` on a local Ray cluster of ``--slots`` CPUs (started before the
  clock starts, shut down after), each run a Ray job of one CPU.

Printed: wall time per way and its speed-up over serial, with the machine's load.

Usage: python benchmarks/p2p_fanout.py [--iterations 2] [--timesteps 4096] [--slots 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine_load import LoadSampler, print_machine

REWARD = '''```python
def reward_fn(obs, action, next_obs, info):
    """Keep the pole upright.
    LaTeX: r = 1 - |theta|
    Terms:
        upright: one minus the pole angle
    """
    up = 1.0 - abs(float(next_obs[1]))
    return up, {"upright": up}
```'''


def reply(request: Any) -> str:
    system = str(request.messages[0]["content"])
    if "success criteria" in system:
        return "- the pole stays up"
    if "SCORE" in system:
        return "SCORE: 0.2"
    return REWARD


def session(tmp: Path, name: str, iterations: int, timesteps: int, **settings: Any) -> float:
    """Wall seconds of one session (its status must be max_iterations: every run trained)."""
    from langmarl.p2p.session.config import LoopConfig
    from langmarl.p2p.session.loop import run_loop
    from langmarl.testing import ScriptedLLM

    config = LoopConfig(
        env_id="InvertedPendulum-v5", max_iterations=iterations, total_timesteps=timesteps,
        code_judge=False, elaborate=False, review=False, hp_tuning=False, seed=[1, 2],
        configs=[{"learning_rate": 1e-3}, {"learning_rate": 3e-4}],
        train={"num_steps": 512, "batch_size": 64, "n_epochs": 4, "num_evals": 2,
               "eval_episodes": 3, "record_video": False},
        **settings,
    )  # fmt: skip
    started = time.perf_counter()
    result = run_loop("balance the pole", config, llm=ScriptedLLM(reply), runs_dir=tmp / name)
    seconds = time.perf_counter() - started
    if result.status != "max_iterations":
        raise SystemExit(f"{name}: the session ended {result.status}: {result.error}")
    runs = sum(1 for _ in (tmp / name).glob("*/iter_*/runs/*/summary.json"))
    print(f"{name:>7}: {seconds:6.1f} s  ({runs} runs)", flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--timesteps", type=int, default=4096)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true", help="Skip the Ray cluster.")
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    print(f"{args.iterations} iteration(s) x 2 configs x 2 seeds, {args.timesteps} steps per run")
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="p2p-fanout-") as temp, LoadSampler() as load:
        tmp = Path(temp)
        times["serial"] = session(tmp, "serial", args.iterations, args.timesteps, max_parallel=1)
        times["local"] = session(tmp, "local", args.iterations, args.timesteps, backend="local")
        if not args.no_ray:
            import ray

            ray.init(num_cpus=args.slots, include_dashboard=False, namespace="langmarl-jobs",
                     object_store_memory=80 * 2**20, log_to_driver=False)  # fmt: skip
            try:
                address = ray.get_runtime_context().gcs_address
                times["ray"] = session(
                    tmp, "ray", args.iterations, args.timesteps, backend="ray", ray_address=address
                )
            finally:
                ray.shutdown()
    for name, seconds in times.items():
        print(f"{name:>7}: {seconds:6.1f} s, {times['serial'] / seconds:4.2f}x serial")
    print(f"load: {load.summary()}")


if __name__ == "__main__":
    print_machine()
    main()
