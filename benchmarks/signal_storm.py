"""How often a SIGTERM storm breaks a process that cancels runs again and again.

Runs the storm of ``tests/core/test_signals.py`` (``langmarl.testing.processes.sigterm_storm``:
200 rounds of ``run_sync`` on a coroutine that never ends, each cancelled by SIGTERM)
``--runs`` times, and counts the runs that did not print "every round cancelled" and exit 0.
The last 2,000 characters of each failure's stderr are printed. Rare races show under load:
run it beside busy processes, e.g.
``.venv/bin/python benchmarks/busy_machine.py --busy 3 run -- .venv/bin/python
benchmarks/signal_storm.py --runs 400``.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=200, help="cancelled runs per storm")
    args = parser.parse_args()

    from langmarl.core.machine import describe
    from langmarl.testing.processes import sigterm_storm

    print(describe(), flush=True)
    started, failed = time.perf_counter(), 0
    for _ in range(args.runs):
        ready, returncode, out, err = sigterm_storm(args.rounds, timeout_s=120)
        if not (ready and returncode == 0 and out == "every round cancelled\n"):
            failed += 1
            print(f"--- failure {failed}:\n{err[-2000:]}", flush=True)
    seconds = time.perf_counter() - started
    print(f"{failed} of {args.runs} storms failed ({seconds:.0f} s; load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
