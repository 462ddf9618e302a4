"""Ray nodes on this machine, started as on a cluster (``ray start``) and joined from the test's
process, then stopped by pid.

Why not a local Ray from ``ray.init(num_cpus=...)``: once such a Ray was shut down, a later
``ray.init(address=...)`` in the same process joins a cluster whose actors die before they
run ("The actor died unexpectedly before finishing this task", Ray 2.60), so the Ray jobs
tests' cluster broke the placement tests whenever xdist ran both modules in one worker.
Joining nodes that ``ray start`` started leaves no such state behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from langmarl.testing.processes import all_gone, command_line, descendants, free_port

RAY = Path(sys.executable).with_name("ray")


def stop_nodes(temp: Path) -> None:
    """End the processes of the nodes started with ``--temp-dir temp`` (their command lines
    name it) and every process below them (the actors' workers), by pid: ``ray stop`` would
    stop every Ray of the machine, other runs' too."""
    running = (int(entry.name) for entry in Path("/proc").glob("[0-9]*"))
    roots = {pid for pid in running if str(temp) in command_line(pid)}
    pids = descendants(roots) - {os.getpid()}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if all_gone(sorted(pids), within_s=10):
            return


@contextlib.contextmanager
def ray_nodes(
    cpus: Sequence[int], *, object_store_mb: int | None = None, **init: object
) -> Iterator[str]:
    """Start one Ray node per entry of ``cpus`` (that many CPUs each; the first is the head),
    join them from this process (``ray.init(address=..., **init)``) and yield the head's
    address; leave, and stop the nodes by pid, afterwards.

    Ray 2.60's ``ray start`` turns on token authentication, which a node joining needs the
    head's token for; these nodes opt out (``RAY_AUTH_MODE=disabled``) so nothing is read
    outside the repository. Their workers run at niceness 0 (``RAY_worker_niceness``), the
    priority of the test's other processes: at Ray's default (15) an actor got 2% of a core
    beside them (``langmarl/magrpo/placement/cluster.py``)."""
    import ray

    temp = Path(tempfile.mkdtemp(prefix="lmray", dir="/tmp"))  # short: socket paths ≤ 107
    port = free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
           "RAY_worker_niceness": "0"}  # fmt: skip
    head = ["--head", f"--port={port}", "--include-dashboard=false",
            f"--ray-client-server-port={free_port()}"]  # fmt: skip
    store = [f"--object-store-memory={object_store_mb * 2**20}"] if object_store_mb else []
    try:
        for index, count in enumerate(cpus):
            role = head if index == 0 else [f"--address=127.0.0.1:{port}"]
            # Ports whose defaults are fixed get free ones: other Ray clusters may run here.
            ports = [f"--dashboard-agent-listen-port={free_port()}",
                     f"--metrics-export-port={free_port()}"]  # fmt: skip
            # No log monitor: the actors' output is not forwarded here (their errors are).
            command = [str(RAY), "start", *role, *ports, f"--num-cpus={count}", *store,
                       f"--temp-dir={temp}", "--disable-usage-stats",
                       "--include-log-monitor=false"]  # fmt: skip
            subprocess.run(command, env=env, check=True, capture_output=True, timeout=180)
        ray.init(address=f"127.0.0.1:{port}", logging_level="WARNING", **init)
        assert len([n for n in ray.nodes() if n["Alive"]]) == len(cpus)
        yield f"127.0.0.1:{port}"
    finally:
        ray.shutdown()
        stop_nodes(temp)
        shutil.rmtree(temp, ignore_errors=True)
