"""How long ``import langmarl`` takes in a fresh interpreter, and whether it loads torch.

Run: ``.venv/bin/python benchmarks/import_time.py [--runs 10]``
Prints the median wall time of ``python -c "import langmarl"`` beside ``python -c "pass"``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from machine_load import print_machine  # beside this script


def wall(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()}")
    bare = wall("pass", args.runs)
    ours = wall("import langmarl", args.runs)
    heavy = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, langmarl; print([m for m in ('torch', 'transformers', 'openai') "
            "if m in sys.modules])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"python -c pass:            {bare * 1000:7.1f} ms (median of {args.runs})")
    print(f"python -c import langmarl: {ours * 1000:7.1f} ms (+{(ours - bare) * 1000:.1f} ms)")
    print(f"heavy modules loaded by the import: {heavy}")


if __name__ == "__main__":
    print_machine()
    main()
