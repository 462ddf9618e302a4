"""Where one MAGRPO step's time and memory go: the benchmark's langmarl worker with its
phases timed (rollout sampling, each agent's decoding loop, forward + backward, clip + AdamW)
and the process's resident memory sampled every 5 ms, labelled by phase.

Same settings as ``benchmarks/magrpo_vs_comlrl.py`` (its ``worker_ours``); one warm-up step
is not counted.

    .venv/bin/python benchmarks/magrpo_step_profile.py --turns 1 [--variant ours] [--threads 2]
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from machine_load import print_machine  # beside this script

sys.path.insert(0, str(Path(__file__).resolve().parent))

import magrpo_vs_comlrl as bench

PHASES = {
    "rollout: all agents sampled": ("langmarl.magrpo.rollout", "_generate_level", True),
    "  of it, each agent's decoding loop": ("langmarl.magrpo.generation", "decode", False),
    "update: forward + backward": ("langmarl.magrpo.trainer", "accumulate_policy_gradients", True),
    "update: clip + AdamW": ("langmarl.magrpo.trainer", "apply_gradients", True),
}


class Profile:
    """Seconds per phase (while counting) and the peak resident memory seen in each phase."""

    def __init__(self) -> None:
        self.phase = "loading"
        self.counting = False
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.peak_mb: dict[str, float] = collections.defaultdict(float)
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        page_mb = os.sysconf("SC_PAGE_SIZE") / 2**20
        while True:
            with open("/proc/self/statm") as statm:
                resident = int(statm.read().split()[1]) * page_mb
            self.peak_mb[self.phase] = max(self.peak_mb[self.phase], resident)
            time.sleep(0.005)

    def wrap(self, label: str, module: Any, name: str, labels_memory: bool) -> None:
        original = getattr(module, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            outer, began = self.phase, time.perf_counter()
            if labels_memory:
                self.phase = label
            try:
                return original(*args, **kwargs)
            finally:
                if self.counting:
                    self.seconds[label] += time.perf_counter() - began
                self.phase = outer

        setattr(module, name, timed)


def main() -> None:
    import importlib

    import torch

    from langmarl.llm.local.weights import ensure_converted
    from langmarl.magrpo.trainer import MAGRPOTrainer

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=1)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--variant", default="ours", choices=bench.VARIANTS[1:])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    profile = Profile()
    for label, (module, name, labels_memory) in PHASES.items():
        profile.wrap(label, importlib.import_module(module), name, labels_memory)
    step = MAGRPOTrainer.training_step
    done = [0]

    def counted_step(self: MAGRPOTrainer, examples: list[dict[str, Any]]) -> dict[str, float]:
        profile.counting = done[0] > 0  # the first step is a warm-up
        began = time.perf_counter()
        metrics = step(self, examples)
        if profile.counting:
            profile.seconds["step"] += time.perf_counter() - began
        done[0] += 1
        profile.phase = "between steps"
        return metrics

    MAGRPOTrainer.training_step = counted_step  # type: ignore[method-assign]
    print(f"T={args.turns} {args.variant} threads={args.threads} load {os.getloadavg()}")
    bench.worker_ours(str(ensure_converted()), args.turns, args.steps, args.variant)
    for label, seconds in profile.seconds.items():
        print(f"  {label:40s} {seconds / args.steps:7.2f} s/step")
    for label, peak in profile.peak_mb.items():
        print(f"  peak RSS during {label:31s} {peak:7.0f} MB")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    print_machine()
    main()
