"""How often a SIGTERM storm breaks a process that cancels runs again and again.

Runs ``tests/core/test_signals.py``'s storm script (``SIGTERM_STORM``: 200 rounds of
``run_sync`` on a coroutine that never ends, each cancelled by SIGTERM) ``--runs`` times,
sending SIGTERM without pause until it exits, and counts the runs that did not print "every
round cancelled" and exit 0. The first 2,000 characters of each failure's stderr are
printed. Rare races show under load: run it beside busy processes, e.g.
``.venv/bin/python benchmarks/busy_machine.py --busy 3 run -- .venv/bin/python
benchmarks/signal_storm.py --runs 400``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))
from test_signals import SIGTERM_STORM


def storm(rounds: int, timeout_s: float) -> tuple[bool, str]:
    """One storm: whether it ended as it should, and its stderr."""
    script = [sys.executable, "-c", SIGTERM_STORM.format(rounds=rounds)]
    process = subprocess.Popen(script, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    if process.stdout.readline() == "ready\n":
        while process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
    process.kill()
    out, err = process.communicate()
    return process.returncode == 0 and out == "every round cancelled\n", err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200, help="cancelled runs per storm")
    args = parser.parse_args()

    from langmarl.core.machine import describe

    print(describe(), flush=True)
    started, failed = time.perf_counter(), 0
    for _ in range(args.runs):
        ok, err = storm(args.rounds, timeout_s=120)
        if not ok:
            failed += 1
            print(f"--- failure {failed}:\n{err[-2000:]}", flush=True)
    seconds = time.perf_counter() - started
    print(f"{failed} of {args.runs} storms failed ({seconds:.0f} s; load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
