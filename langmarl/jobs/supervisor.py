"""The process that watches one local job (``python -m langmarl.jobs.supervisor``)::

    wait in the queue until the job's cores are free        (SIGTERM here: cancelled)
    record running + cores; run the command pinned to them  (SIGTERM: forwarded, then
                                                              SIGKILL after the grace period)
    record the outcome: exit code, and completed / failed / cancelled from it and run.json

It runs in its own session, so a job outlives the ``langmarl jobs submit`` that started it,
and it is the job's pid in the record: while it lives the job is queued or running.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from langmarl.core.processes import process_alive, process_start
from langmarl.core.signals import Flag
from langmarl.jobs.cores import core_pool, pick_cores
from langmarl.jobs.environment import job_environment
from langmarl.jobs.process import GRACE_S, run_command
from langmarl.jobs.records import JobRecord, JobStore, outcome
from langmarl.jobs.spec import command

POLL_S = 0.2


def _take_cores(store: JobStore, job_id: str, pool: list[int]) -> JobRecord | None:
    """Mark the job running on free cores (under the lock); None while too few are free or
    an older job waits (first come, first served)."""
    with store.locked():
        record = store.read(job_id)
        live = [other for other in store.all() if other.job_id != job_id and _alive(other)]
        if any(o.state == "queued" and o.submitted_at < record.submitted_at for o in live):
            return None
        taken = [core for other in live if other.state == "running" for core in other.cores]
        cores = pick_cores(pool, taken, record.spec.resources.cpus)
        if cores is None:
            return None
        record = record.model_copy(update={"state": "running", "cores": cores,
                                           "started_at": time.time()})  # fmt: skip
        store.write(record)
    return record


def _alive(record: JobRecord) -> bool:
    return record.pid is not None and process_alive(record.pid, record.pid_started)


def supervise(store: JobStore, job_id: str, max_cpus: int | None, grace_s: float) -> int:
    """Queue, run and record one job; returns the command's exit code (143: cancelled in
    the queue)."""
    stop = Flag()  # not a threading.Event: its lock could deadlock a second SIGTERM's handler
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    pool = core_pool(max_cpus)
    record = None
    while record is None:
        if stop.is_set() or store.read(job_id).cancel_requested:
            store.update(job_id, cancel_requested=True, **outcome(store.read(job_id), None))
            return 143
        record = _take_cores(store, job_id, pool)
        if record is None:
            time.sleep(POLL_S)
    argv = command(record.spec, store.config_path(job_id), sys.executable) + record.extra_args
    log_path = Path(record.log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        code = run_command(
            argv, env=job_environment(record.spec.resources.cpus, record.spec.env), log=log,
            stop_requested=lambda: stop.is_set() or store.read(job_id).cancel_requested,
            grace_s=grace_s, cores=record.cores,
            started=lambda pid: store.update(job_id, command_pid=pid,
                                             command_started=process_start(pid)),
        )  # fmt: skip
    with store.locked():
        final = store.read(job_id)
        store.write(final.model_copy(update=outcome(final, code)))
    return code


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("runs_dir")
    parser.add_argument("job_id")
    parser.add_argument("--max-cpus", type=int, default=None)
    parser.add_argument("--grace", type=float, default=GRACE_S)
    parsed = parser.parse_args(args)
    return supervise(JobStore(parsed.runs_dir), parsed.job_id, parsed.max_cpus, parsed.grace)


if __name__ == "__main__":
    sys.exit(main())
