"""`run_sync` under SIGTERM and Ctrl-C: the interrupt cancels the coroutine, which unwinds
whole, and is raised once it has (issue 37: raised inside a task that `gather` awaits, it
left the event loop before the coroutine recording the run's status could run its
`finally`, so `run.json` stayed `running`)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest

from langmarl.core import signals
from langmarl.core.aio import run_sync
from langmarl.core.signals import RunCancelled


@pytest.fixture
def langmarl_handlers() -> Iterator[None]:
    """The handlers the `langmarl` command installs, removed (flags cleared) afterwards."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signals.stop_on_signals()
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        signals._terminated.clear()
        signals._interrupted.clear()


async def _nested(seen: list[str], signum: int) -> None:
    """A coroutine whose grandchild task, one of two under `gather`, gets ``signum``."""

    async def grandchild() -> None:
        os.kill(os.getpid(), signum)
        seen.append("grandchild went on")  # the handler ran in this task's frame
        await asyncio.sleep(10)

    async def child() -> None:
        await asyncio.gather(grandchild(), asyncio.sleep(10))

    try:
        await asyncio.gather(child(), asyncio.sleep(10))
    except asyncio.CancelledError:
        seen.append("cancelled")
        raise
    finally:
        seen.append("finally")


@pytest.mark.usefixtures("langmarl_handlers")
@pytest.mark.parametrize(
    ("signum", "interrupt", "flag"),
    [
        (signal.SIGTERM, RunCancelled, signals.termination_requested),
        (signal.SIGINT, KeyboardInterrupt, signals.interrupt_requested),
    ],
)
def test_an_interrupt_in_a_nested_task_unwinds_the_whole_coroutine(
    signum: int, interrupt: type[BaseException], flag: object
) -> None:
    seen: list[str] = []
    with pytest.raises(interrupt) as raised:
        run_sync(_nested(seen, signum))
    assert seen == ["grandchild went on", "cancelled", "finally"]
    assert (type(raised.value) is RunCancelled) == (signum == signal.SIGTERM)
    assert flag()  # type: ignore[operator]
    assert signal.getsignal(signal.SIGTERM) is signals._on_sigterm  # put back


@pytest.mark.usefixtures("langmarl_handlers")
def test_an_interrupt_after_the_work_finished_is_still_raised() -> None:
    async def finishes() -> str:
        os.kill(os.getpid(), signal.SIGTERM)
        return "done"  # no await left: nothing to cancel

    with pytest.raises(RunCancelled):
        run_sync(finishes())


@pytest.mark.usefixtures("langmarl_handlers")
def test_a_second_ctrl_c_raises_at_once() -> None:
    seen: list[str] = []

    async def insists() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled")
            os.kill(os.getpid(), signal.SIGINT)
            seen.append("not reached")

    with pytest.raises(KeyboardInterrupt):
        run_sync(insists())
    assert seen == ["cancelled"]


def test_without_langmarl_handlers_nothing_changes() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)  # another test may have set ours
    try:
        assert run_sync(asyncio.sleep(0, result=3)) == 3
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # never swapped
    finally:
        signal.signal(signal.SIGTERM, previous)
