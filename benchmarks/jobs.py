"""Overhead per job of LocalBackend and RayBackend, side by side.

The job is the cheapest real run: a one-iteration, one-episode language run against a
scripted OpenAI-compatible HTTP server on loopback (``OpenAIStub``), so each job is mostly the
``langmarl train`` process starting up. ``--jobs`` of them (default 16) run three ways, each
with ``--slots`` at a time (default 2: one core each):

* direct: the same command lines as plain subprocesses (the baseline: no backend);
* local: ``LocalBackend(max_cpus=slots)``, submit all, wait for all;
* ray: ``RayBackend`` on a local Ray cluster of ``slots`` CPUs (its start-up timed apart).

Overhead per job = (backend's wall time − direct wall time) / jobs; submit latency is the
median time of one ``submit`` call (validation, records, process or actor start).

Usage: python benchmarks/jobs.py [--jobs 16] [--slots 2]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine_load import print_machine  # beside this script

from langmarl.core.files import atomic_write_json
from langmarl.jobs import Backend, JobSpec, LocalBackend
from langmarl.jobs.spec import command, resolve_config
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.roles import role_responder

REPLY = role_responder({"critic": '{"answerer": "one word"}', "rewrite": "Answer in one word.",
                        "gradient": "One word.", "aggregate": "One word.",
                        "actor": "Answer: Paris"})  # fmt: skip


def tiny_spec(stub: OpenAIStub, index: int) -> JobSpec:
    config = {"env": "language", "num_iterations": 1, "trajectories_per_iteration": 1,
              "validation_size": 1, "llm": stub.llm_config(), "seed": index}  # fmt: skip
    return JobSpec(kind="language", config=config, name=f"bench{index}")


def direct(specs: list[JobSpec], root: Path, slots: int) -> float:
    """Wall time of the jobs' commands as plain subprocesses, ``slots`` at a time."""
    commands = []
    for index, spec in enumerate(specs):
        config, extra = resolve_config(spec, root / f"direct{index}")
        atomic_write_json(root / f"direct{index}.json", config)
        commands.append(command(spec, root / f"direct{index}.json", extra, sys.executable))
    start, running = time.perf_counter(), []
    for argv in commands:
        while len(running) >= slots:
            running = [p for p in running if p.poll() is None]
            time.sleep(0.02)
        running.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
    for process in running:
        process.wait()
    return time.perf_counter() - start


def through(backend: Backend, specs: list[JobSpec]) -> tuple[float, float, int]:
    """(wall time, median submit latency, completed jobs) of ``specs`` on ``backend``."""
    start, latencies, ids = time.perf_counter(), [], []
    for spec in specs:
        before = time.perf_counter()
        ids.append(backend.submit(spec))
        latencies.append(time.perf_counter() - before)
    done = [backend.wait(job_id, timeout_s=600) for job_id in ids]
    completed = sum(record.state == "completed" for record in done)
    return time.perf_counter() - start, statistics.median(latencies), completed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--slots", type=int, default=2)
    args = parser.parse_args()
    import ray

    from langmarl.jobs.ray_backend import RayBackend

    with tempfile.TemporaryDirectory() as temp, OpenAIStub(responder=REPLY) as stub:
        root = Path(temp)
        specs = [tiny_spec(stub, i) for i in range(args.jobs)]
        baseline = direct(specs, root / "direct", args.slots)
        local = through(LocalBackend(root / "local", max_cpus=args.slots), specs)
        started = time.perf_counter()
        ray.init(num_cpus=args.slots, include_dashboard=False, log_to_driver=False,
                 object_store_memory=80 * 2**20, namespace="langmarl-jobs")  # fmt: skip
        ray_start = time.perf_counter() - started
        try:
            on_ray = through(RayBackend(root / "ray"), specs)
        finally:
            ray.shutdown()
    print(f"{args.jobs} tiny language jobs, {args.slots} at a time")
    print(f"{'':8} {'wall s':>8} {'overhead/job s':>15} {'submit ms':>10} {'completed':>10}")
    print(f"{'direct':8} {baseline:8.2f} {'-':>15} {'-':>10} {'-':>10}")
    for name, (wall, submit, completed) in (("local", local), ("ray", on_ray)):
        overhead = (wall - baseline) / args.jobs
        print(f"{name:8} {wall:8.2f} {overhead:15.3f} {submit * 1000:10.1f} {completed:10d}")
    print(f"ray cluster start-up (not in the ray row): {ray_start:.2f} s")


if __name__ == "__main__":
    print_machine()
    main()
