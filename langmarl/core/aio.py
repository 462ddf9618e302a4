"""Sync and async twins: one way to call a coroutine from sync code and back.

langmarl's I/O (LLM calls, sandboxed programs, episodes) is async underneath; each public
operation also has a blocking form, and blocking work (a sandboxed program, a verifier) has
an awaitable form that runs in a worker thread. These helpers make one twin from the other
so that a signature and its docs are written once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from langmarl.core.signals import interrupts_cancel

T = TypeVar("T")
P = ParamSpec("P")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code, also when an event loop is running (then
    in a fresh loop on a worker thread, so a notebook or an async caller does not deadlock).

    SIGTERM and Ctrl-C (with langmarl's handlers) cancel ``coro`` at its next ``await``,
    and the interrupt (:class:`~langmarl.core.signals.RunCancelled` or ``KeyboardInterrupt``)
    is raised here once it has unwound, so every ``finally`` and ``except CancelledError``
    in it runs (:func:`~langmarl.core.signals.interrupts_cancel` says why)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_interruptible(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _run_interruptible(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, an interrupt cancelling its task; the interrupt is raised after
    it, also when ``coro`` finished anyway (it came too late to cancel anything).

    The handlers are swapped around the whole ``asyncio.run``, in this sync frame, not inside
    the coroutine: an interrupt raised while ``asyncio.run`` builds its loop or its task (a
    SIGTERM storm did, in ``create_task``) left the task scheduled but unknown to the runner,
    which then ran it while shutting down and closed the loop under it, its handler still
    installed. The next SIGTERM then called that handler with a closed loop (tests/core/
    test_signals.py's storm failed so in 3 of 400 runs beside three busy processes)."""
    started: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []

    def cancel() -> None:
        if started and not started[0][0].is_closed():
            loop, task = started[0]
            loop.call_soon_threadsafe(task.cancel)
        # else: not started yet (main sees the interrupt and does not start coro), or over

    async def main() -> T:
        task = asyncio.current_task()
        assert task is not None  # main runs as asyncio.run's task
        started.append((asyncio.get_running_loop(), task))
        if received():  # came while asyncio.run was starting
            coro.close()
            raise asyncio.CancelledError
        return await coro

    outcome: list[T] = []
    try:
        with interrupts_cancel(cancel) as received:
            try:
                outcome.append(asyncio.run(main()))
            except asyncio.CancelledError:
                if received() is None:
                    raise
    finally:
        coro.close()  # never started if the interrupt came first; a no-op once it has run
    if (interrupt := received()) is not None:
        raise interrupt
    return outcome[0]


def blocking(function: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking twin of an async function or method ``aname``: named ``name``, same
    arguments, run with :func:`run_sync`."""

    @functools.wraps(function)
    def twin(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(function(*args, **kwargs))

    twin.__name__ = twin.__qualname__ = function.__name__.removeprefix("a")
    twin.__doc__ = f"Blocking ``{function.__name__}``: same arguments, same result."
    return twin


def threaded(function: Callable[P, T]) -> Callable[P, Coroutine[Any, Any, T]]:
    """The awaitable twin of a blocking function: same arguments, run in a worker thread so
    the event loop goes on. Cancelling the await does not stop the thread's work."""

    @functools.wraps(function)
    async def twin(*args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(function, *args, **kwargs)

    twin.__name__ = twin.__qualname__ = f"{function.__name__}_async"
    twin.__doc__ = (
        f":func:`{function.__name__}` without blocking the event loop (in a worker thread; "
        "cancelling the await does not stop it early)."
    )
    return twin
