"""An interrupt that Python drops is sent again (issue 37).

A p2p bench stopped through the API ran on to its last case: the SIGTERM arrived while a
sandboxed process was being started, its handler ran inside ``logging``'s at-fork hook (a
``Popen`` with a ``preexec_fn`` runs them), and Python dropped the ``RunCancelled`` it raised
("Exception ignored in: <function _releaseLock>"). Each case runs in a fresh interpreter:
the handlers, the hook and the at-fork hook are process-wide.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from langmarl.testing.processes import sigterm_storm

DROPPED_IN_A_FORK = """
import os, signal, subprocess, sys, time
from langmarl.core import signals
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (xdist ignores it)
signals.stop_on_signals()
signum = signal.{name}
# the interrupt comes while Popen forks: its handler runs in an at-fork hook, which drops it
os.register_at_fork(after_in_parent=lambda: signal.raise_signal(signum))
try:
    subprocess.run(["true"], preexec_fn=lambda: None)
    print("the run went on", flush=True)
    time.sleep(30)
    print("never interrupted")
except KeyboardInterrupt as interrupt:
    print(type(interrupt).__name__, signals.termination_requested(), signals.interrupt_requested())
"""


@pytest.mark.parametrize(
    ("name", "raised"),
    [("SIGTERM", "RunCancelled True True"), ("SIGINT", "KeyboardInterrupt False True")],
)
def test_an_interrupt_dropped_in_an_at_fork_hook_is_raised_after_it(name: str, raised: str):
    done = subprocess.run(
        [sys.executable, "-c", DROPPED_IN_A_FORK.format(name=name)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.splitlines() == ["the run went on", raised], (done.stdout, done.stderr)
    assert "Exception ignored" not in done.stderr, done.stderr


OTHER_DROPPED = """
import signal
from langmarl.core import signals
signals.stop_on_signals()
signals.stop_on_signals()  # installed once: the hook is not wrapped twice

class Broken:
    def __del__(self):
        raise ValueError("not an interrupt")

Broken()
print(signals.termination_requested(), signals.interrupt_requested())
"""


def test_other_dropped_exceptions_are_reported_as_before() -> None:
    done = subprocess.run([sys.executable, "-c", OTHER_DROPPED], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "False False\n", done.stderr
    assert done.stderr.count("Exception ignored") == 1 and "not an interrupt" in done.stderr


def test_a_second_sigterm_during_the_cleanup_is_still_ignored() -> None:
    """Sending the dropped SIGTERM again must not make every later SIGTERM raise."""
    code = """
import os, signal, time
from langmarl.core import signals
signals.stop_on_signals()
try:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
except signals.RunCancelled:
    os.kill(os.getpid(), signal.SIGTERM)  # while the run saves its files
    time.sleep(0.5)
    print("cleanup finished")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.stdout == "cleanup finished\n", (done.stdout, done.stderr)


def test_sigterms_in_a_burst_cancel_and_never_deadlock_the_handler() -> None:
    """A command whose Ray worker was SIGKILLed got four SIGTERMs at once and hung for good:
    the second one's handler ran while the first one's held the lock of a ``threading.Event``
    and waited for it. Here SIGTERMs arrive without pause while a run is cancelled again and
    again; with the lock, the handlers nested until the process died of a RecursionError (or a
    run hung, one in twenty when a burst came once)."""
    # 200 rounds, ~1 s; the 120 s deadline is a safety net
    ready, returncode, out, err = sigterm_storm(rounds=200, timeout_s=120)
    assert ready, err[-2000:]
    assert returncode == 0 and out == "every round cancelled\n", (out, err[-2000:])


SIGTERM_WHILE_ASYNCIO_RUN_STARTS = """
import asyncio, os, signal
from asyncio import tasks
from langmarl.core import signals
from langmarl.core.aio import run_sync
signals.stop_on_signals()
register = tasks._all_tasks.add  # asyncio.run's task is scheduled, then registered here


def interrupted(task):
    del tasks._all_tasks.add  # once
    os.kill(os.getpid(), signal.SIGTERM)  # its handler runs at the next bytecode, here
    register(task)


tasks._all_tasks.add = interrupted
started = []


async def work():
    started.append(True)
    await asyncio.sleep(3600)


try:
    run_sync(work())
except signals.RunCancelled:
    print(started, signal.getsignal(signal.SIGTERM) is signals._on_sigterm, flush=True)
"""


def test_a_sigterm_while_asyncio_run_starts_cancels_before_the_work_and_restores_the_handler():
    """The storm above failed 3 times in 400 beside three busy processes: a SIGTERM raised
    inside ``asyncio.run``'s ``create_task``, after the task was scheduled and before the
    runner knew it, so the runner ran it while shutting down, closed the loop under it and
    left its handler installed; the next SIGTERM called that handler with a closed loop. Here
    the SIGTERM comes at that moment: the work never starts, the run is cancelled and
    langmarl's own handler is back."""
    script = [sys.executable, "-c", SIGTERM_WHILE_ASYNCIO_RUN_STARTS]
    done = subprocess.run(script, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "[] True\n"), done.stderr[-2000:]


LEFT_INSTALLED = """
import os, signal
from langmarl.core import signals
signals.stop_on_signals()
cancelled = []
with signals.interrupts_cancel(lambda: cancelled.append(True)):
    deferred = signal.getsignal(signal.SIGTERM)
signal.signal(signal.SIGTERM, deferred)  # as if its restore had been cut short
try:
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(1000):
        pass
except signals.RunCancelled:
    print("raised", cancelled, flush=True)
"""


def test_a_deferring_handler_left_installed_raises_as_langmarls_own_does():
    """Out of its ``with``, the handler that cancels a run's task is langmarl's plain one: the
    interrupt is raised, nothing stale is cancelled."""
    done = subprocess.run([sys.executable, "-c", LEFT_INSTALLED], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "raised []\n"), done.stderr[-2000:]
