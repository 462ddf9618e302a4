"""The weight-space quickstart on a GPU: seconds per step and peak GPU memory (issue 41, item 5).

The quickstart's MAGRPO (``configs/magrpo/quickstart.json``: two SmolLM2-135M agents with
LoRA, the poster task) trains ``--steps`` steps per case:

- ``fp32``: the model rollouts sample from and the update both in fp32
  (``trainer.sampling_precision`` and ``trainer.update_precision`` = ``"fp32"``);
- ``bf16``: rollouts from a bf16 copy, the update under bf16 autocast (both knobs ``"bf16"``);

each with both agents on one device (``agent_devices: ["cuda:0", "cuda:0"]``) and, when two
GPUs are present, one agent per device (``["cuda:0", "cuda:1"]``). It prints the machine (the
CPU line of ``machine_load.print_machine`` and the GPUs) and one row per case: mean seconds
per step (the first step, a warm-up, left out when there are several) and the peak GPU memory
of each device the case used (``torch.cuda.max_memory_allocated``). The defaults fit in under
10 minutes on one GPU.

Without CUDA (or with ``--device cpu``) the same cases run on the CPU, the two-device one
left out; ``--tiny`` shrinks the run (one step, two tokens, two completions, one example) so
the test suite runs the script and it cannot rot::

    .venv/bin/python benchmarks/gpu_check.py               # on a GPU machine
    .venv/bin/python benchmarks/gpu_check.py --tiny        # anywhere, ~10 s
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine_load import print_machine  # beside this script

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "magrpo" / "quickstart.json"
PRECISIONS = ("fp32", "bf16")
TINY = {
    "trainer.max_new_tokens": 2,
    "trainer.num_generations": 2,
    "trainer.joint_mode": "align",
    "trainer.per_device_train_batch_size": 1,
    "trainer.micro_batch_size": 4,
    "task.num_train": 1,
    "task.num_eval": 1,
}
"""What ``--tiny`` changes in the quickstart (with one step): a smoke run, not a figure."""


@dataclass(frozen=True)
class Case:
    """One run: the agents' devices and the precision of sampling and update."""

    precision: str
    devices: tuple[str, str]

    @property
    def placement(self) -> str:
        return "one device" if self.devices[0] == self.devices[1] else "two devices"


def cases(device: str, gpus: int) -> tuple[list[Case], list[str]]:
    """The cases to run on ``device`` (``"cuda"`` or ``"cpu"``) with ``gpus`` GPUs present,
    and a line for each case left out."""
    first = "cuda:0" if device == "cuda" else "cpu"
    runs = [Case(p, (first, first)) for p in PRECISIONS]
    skipped = []
    if device == "cuda" and gpus >= 2:
        runs += [Case(p, ("cuda:0", "cuda:1")) for p in PRECISIONS]
    else:
        why = f"{gpus} GPU" if device == "cuda" else "on the CPU"
        skipped.append(f"two devices: left out ({why}; agent_devices needs two GPUs)")
    return runs, skipped


def gpu_line(device: str) -> str:
    """The GPUs of this machine, or why the run is on the CPU."""
    import torch

    if device != "cuda":
        why = "--device cpu" if torch.cuda.is_available() else "CUDA not available"
        return f"GPU: none used ({why}): the cases run on the CPU"
    names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    total = torch.cuda.get_device_properties(0).total_memory / 2**30
    return f"GPU: {len(names)} x {', '.join(sorted(set(names)))} ({total:.0f} GiB each)"


def run_case(case: Case, overrides: dict[str, Any], out: Path) -> dict[str, Any]:
    """Train the quickstart as ``case`` says; its seconds per step and peak GPU memory."""
    import torch

    from langmarl.magrpo.run import build_magrpo_trainer, load_run_config

    gpus = sorted({d for d in case.devices if d.startswith("cuda")})
    for device in gpus:
        torch.cuda.reset_peak_memory_stats(device)
    settings = {
        **overrides,
        "run_id": f"{case.precision}-{case.placement.replace(' ', '-')}",
        "trainer.agent_devices": list(case.devices),
        "trainer.sampling_precision": case.precision,
        "trainer.update_precision": case.precision,
    }
    started = time.perf_counter()
    trainer = build_magrpo_trainer(load_run_config(CONFIG, {"runs_dir": str(out), **settings}))
    history = trainer.train()
    steps = [m["step_seconds"] for m in history]
    measured = steps[1:] if len(steps) > 1 else steps  # the first step warms the kernels up
    peaks = [torch.cuda.max_memory_allocated(d) / 2**30 for d in gpus]
    del trainer
    if gpus:
        torch.cuda.empty_cache()
    return {
        "case": case,
        "steps": len(measured),
        "step_s": statistics.mean(measured),
        "peaks": peaks,
        "wall_s": time.perf_counter() - started,
    }


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| precision | agents on | devices | s/step | steps measured | peak GPU GiB | wall s |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        case: Case = row["case"]
        peaks = " / ".join(f"{p:.2f}" for p in row["peaks"]) or "n/a (cpu)"
        lines.append(
            f"| {case.precision} | {case.placement} | {', '.join(case.devices)} | "
            f"{row['step_s']:.2f} | {row['steps']} | {peaks} | {row['wall_s']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4, help="steps per case (first: warm-up)")
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                        help="auto: cuda when available, else cpu")  # fmt: skip
    parser.add_argument("--tiny", action="store_true", help="one step, a few tokens")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    options = parser.parse_args(argv)
    import torch

    from langmarl.config.overrides import parse_assignment

    device = options.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here; use --device cpu")
    print_machine()
    print(gpu_line(device), flush=True)
    overrides: dict[str, Any] = dict(TINY) if options.tiny else {}
    overrides["trainer.max_steps"] = 1 if options.tiny else options.steps
    overrides.update(parse_assignment(item) for item in options.set)
    runs, skipped = cases(device, torch.cuda.device_count() if device == "cuda" else 0)
    with tempfile.TemporaryDirectory(prefix="gpu_check") as out:
        rows = [run_case(case, overrides, Path(out)) for case in runs]
    print(table(rows))
    for line in skipped:
        print(line)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    os.chdir(ROOT)
    main()
