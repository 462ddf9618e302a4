"""Shared test configuration."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

# As `dev.py test` does: the processes the tests start (and the workers) write the bytecode
# they compile, so each module of torch and transformers is compiled once in a fresh venv,
# not in every process (with PYTHONDONTWRITEBYTECODE=1, as many Docker images set it, a
# fresh clone's `pytest -n 3` took 620 s and 1,187 CPU-s instead of 445 s and 831).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Under pytest-xdist each worker gets its share of the cores for torch (and passes it on to
# the processes it starts); run alone, langmarl measures the free cores (langmarl.core.cpu).
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    _share = len(os.sched_getaffinity(0)) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    os.environ.setdefault("LANGMARL_TORCH_THREADS", str(max(1, _share)))
    os.environ.setdefault("OMP_NUM_THREADS", os.environ["LANGMARL_TORCH_THREADS"])  # torch's own


@pytest.fixture
def one_torch_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """One torch thread for the test's model runs: with other work on the 2 cores, 2 threads
    are several times slower (under xdist a worker's share is one already; run alone,
    langmarl would take the free cores)."""
    monkeypatch.setenv("LANGMARL_TORCH_THREADS", "1")


def _tensorboard_scalars(run_dir: Path, tag: str) -> list[tuple[int, float]]:
    """Every (step, value) of ``tag`` in every event file under ``<run_dir>/tensorboard``."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    points = []
    for events_file in sorted((run_dir / "tensorboard").rglob("events.out.tfevents.*")):
        events = EventAccumulator(str(events_file))
        events.Reload()
        if tag in events.Tags()["scalars"]:
            points += [(e.step, e.value) for e in events.Scalars(tag)]
    return sorted(points)


@pytest.fixture
def tensorboard_scalars() -> Callable[[Path, str], list[tuple[int, float]]]:
    """Reads a run's TensorBoard scalars back: ``tensorboard_scalars(run_dir, tag)``."""
    return _tensorboard_scalars


def _kill_then_resume_here(target: Path, run_dir: Path, steps: int, kill_at: int = 2) -> None:
    """Run the training script ``target`` (``target RUN_DIR STEPS SLEEP_S``, resuming from the
    newest checkpoint it finds) in a process, SIGKILL it after ``kill_at`` steps, check that
    the run reads ``failed`` with how to resume, then resume it in this process by calling the
    script's ``main(run_dir, steps, 0.0)``: a fresh trainer that knows only the files, and one
    torch import fewer than a second process."""
    import importlib
    import sys

    import torch

    from langmarl.store.run import RunDir
    from langmarl.testing.processes import kill_after_metric_lines

    command = [sys.executable, str(target), str(run_dir), str(steps), "0.3"]
    kill_after_metric_lines(command, run_dir, kill_at)
    record = RunDir(run_dir).record()
    assert record.status == "failed" and "--resume latest" in (record.error or ""), record
    threads, path = torch.get_num_threads(), list(sys.path)
    sys.path.insert(0, str(target.parent))
    try:
        importlib.import_module(target.stem).main(str(run_dir), steps, 0.0)
    finally:
        torch.set_num_threads(threads)  # the script sets its own
        sys.path[:] = path


@pytest.fixture
def kill_then_resume_here() -> Callable[..., None]:
    """The weight-space kill tests' sequence: ``kill_then_resume_here(target, run_dir, steps)``."""
    return _kill_then_resume_here


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """For ``pytest -n N --dist loadgroup`` (``dev.py test``): the tests of a module that
    use a module-scoped fixture stay on one worker (so it is built once), and slow tests
    start first, slow groups before them (so a long one does not end the run alone).

    ``tryfirst``: xdist reads the groups in its own hook of the same name, which pluggy
    calls before this one otherwise (it is registered later). pytest 9.2 broke xdist's
    groups anyway (pyproject.toml pins below it): two workers each started a Ray cluster
    for the same module."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        scopes = {
            d.scope for defs in (info.name2fixturedefs.values() if info else ()) for d in defs
        }
        if "module" in scopes and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    # slow groups first (a group runs serially on one worker), then slow tests, then the rest
    items.sort(
        key=lambda item: (
            item.get_closest_marker("slow") is None,
            item.get_closest_marker("xdist_group") is None,
        )
    )


def _rss_mb() -> int:
    """This worker's resident memory now, in MB (``/proc/self/statm``; 0 off Linux)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // 2**20


TRIM_AFTER_MB = 256
"""A test that grew the worker by more than this gives the freed memory back to the system."""


def _give_back_memory() -> None:
    """Collect what the test left and hand glibc's freed pages back (``malloc_trim``): after a
    training test a worker kept ~2 GB it no longer used (4.7 GB → 2.3 GB after ``del``, 0.4 GB
    after the trim, measured with two SmolLM2 agents), memory the other workers and the
    processes they start could not have — one worker reached 8 GB and was OOM-killed."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """With ``LANGMARL_TEST_TIMELINE=<file>``, one JSON line per test: which worker ran it,
    from when to when, the CPU seconds it used and its memory after (to see how ``dev.py test``
    spreads over the workers, and where the CPU and the memory go)."""
    timeline = os.environ.get("LANGMARL_TEST_TIMELINE")
    began, cpu, rss = time.time(), os.times(), _rss_mb()
    result = yield
    if _rss_mb() - rss > TRIM_AFTER_MB:
        _give_back_memory()
    if timeline:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        now = os.times()  # CPU seconds: this worker's, and its children's once reaped
        line = {"test": item.nodeid, "worker": worker, "start": began, "end": time.time(),
                "cpu": round(now.user + now.system - cpu.user - cpu.system, 2),
                "child_cpu": round(now.children_user + now.children_system
                                   - cpu.children_user - cpu.children_system, 2),
                "rss_mb": _rss_mb()}  # fmt: skip
        with open(timeline, "a", encoding="utf-8") as out:  # one short write per line
            out.write(json.dumps(line) + "\n")
    return result
