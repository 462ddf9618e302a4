"""One piece of work per agent, run at once on threads that split torch's cores between them.

Why threads and not one agent after another: torch releases the GIL inside its kernels, so
two agents' decoding loops or backward passes overlap on two cores, and a 135M model's
per-token matrix products scale poorly over intra-op threads (small, memory-bound), so one
thread per agent gets more done per core than two threads per product
(``benchmarks/magrpo_vs_comlrl.py``, benchmarks/RESULTS.md). The agents share nothing the
work writes to (own weights, optimizer, random generator), so the results are those of the
sequential order, up to the float rounding of a different thread count.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

T = TypeVar("T")

TOKENIZER_LOCK = threading.Lock()
"""Held around tokenizer calls: a Hugging Face fast tokenizer shared by agents is not safe to
call from two threads at once (its padding and truncation settings are mutable state)."""


def parallel_by_default(agents: int) -> bool:
    """``parallel_agents=None``: on when there are several agents and several torch threads."""
    import torch

    return agents > 1 and torch.get_num_threads() > 1


def per_agent(work: Callable[[int], T], agents: int, parallel: bool | None) -> list[T]:
    """``[work(0), ..., work(agents - 1)]``, on one thread per agent when ``parallel``.

    Each worker thread gets an equal share of torch's threads (at least one); torch's thread
    count is restored afterwards. An exception in one agent's work is raised here once every
    agent's work has ended.

    Args:
        work: The work of agent ``i``; must touch only that agent's state.
        agents: Number of agents.
        parallel: Run concurrently (``None``: :func:`parallel_by_default`).
    """
    if parallel is None:
        parallel = parallel_by_default(agents)
    if not parallel or agents < 2:
        return [work(i) for i in range(agents)]
    import torch

    total = torch.get_num_threads()
    workers = min(agents, max(total, 2))
    share = max(1, total // workers)

    def run(index: int) -> T:
        torch.set_num_threads(share)  # this thread's OpenMP team; new threads default to all
        return work(index)

    try:
        futures = [_worker(i % workers).submit(run, i) for i in range(agents)]
        wait(futures)
        return [future.result() for future in futures]
    finally:
        torch.set_num_threads(total)
        release_free_memory()


_WORKERS: dict[int, ThreadPoolExecutor] = {}
_WORKERS_LOCK = threading.Lock()


def _worker(slot: int) -> ThreadPoolExecutor:
    """The one long-lived thread of ``slot``: an agent's work always runs on the same thread,
    so the allocator arena that holds its freed gradients and caches is the one it reuses
    (fresh threads each step grew a second arena's worth of memory)."""
    with _WORKERS_LOCK:
        if slot not in _WORKERS:
            _WORKERS[slot] = ThreadPoolExecutor(1, thread_name_prefix=f"agent-{slot}")
        return _WORKERS[slot]


def release_free_memory() -> None:
    """Give memory freed by the agents' threads back to the system (glibc ``malloc_trim``).

    Freed blocks otherwise stay in each thread's arena, and the next phase's peak sits on
    top of them. A no-op where the C library has no ``malloc_trim``.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
