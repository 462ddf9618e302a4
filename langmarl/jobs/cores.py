"""CPU cores for local jobs: each job is pinned to cores no other running job holds, so
parallel PPO (or torch) runs do not oversubscribe the machine; a job that finds too few free
cores waits in the queue. (Prompt2Policy's reference does the same with ``taskset``.)

The allocation is the set of ``running`` job records' ``cores``, read under the records'
lock: there is no daemon, so any process that starts a job sees the others' cores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from langmarl.core.errors import ConfigError


def core_pool(max_cpus: int | None = None) -> list[int]:
    """The cores local jobs share: this process's allowed cores, the first ``max_cpus``.

    Raises:
        ConfigError: if ``max_cpus`` is below 1.
    """
    if max_cpus is not None and max_cpus < 1:
        raise ConfigError(f"max_cpus={max_cpus}: give at least 1 (or None for every core)")
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[:max_cpus] if max_cpus else allowed


def check_fits(cpus: int, pool: list[int]) -> None:
    """Raises ConfigError if a job of ``cpus`` cores could never start on ``pool``."""
    if cpus > len(pool):
        raise ConfigError(
            f"resources.cpus={cpus} but local jobs have {len(pool)} core(s) "
            f"({','.join(map(str, pool))}): lower resources.cpus (--cpus) or raise max_cpus"
        )


def pick_cores(pool: list[int], taken: Iterable[int], cpus: int) -> list[int] | None:
    """The lowest ``cpus`` cores of ``pool`` not ``taken``; None if too few are free."""
    busy = set(taken)
    free = [core for core in pool if core not in busy]
    return free[:cpus] if len(free) >= cpus else None
