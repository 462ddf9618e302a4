"""How a langmarl process turns SIGINT and SIGTERM into a saved run.

Ctrl-C ends a run ``stopped``; SIGTERM (``langmarl jobs cancel``, a cluster scheduler) ends it
``cancelled``. Both unwind the same way: :class:`RunCancelled` is a ``KeyboardInterrupt``,
so every handler of Ctrl-C saves what it can for SIGTERM too. Signals are process-wide, so the
flags kept here are too; the ``langmarl`` command installs the handlers
(:func:`stop_on_signals`).

While an event loop runs a coroutine for sync code (:func:`langmarl.core.aio.run_sync`), the
interrupt does not raise where the main thread happens to be: :func:`interrupts_cancel` makes
it cancel the coroutine's task (at its next ``await``), and the interrupt is raised once the
coroutine has unwound. Why: raised inside a task that ``gather`` awaits, a
``KeyboardInterrupt`` leaves the event loop from that task, and again from each task awaiting
it while ``asyncio.run`` cancels the rest, so the coroutine recording the run's status could
end without running its ``finally`` (``run.json`` stayed ``running`` in 16 of 120 runs
SIGTERMed at random moments, issue 37).

Python drops an exception raised where nothing can receive it (an at-fork hook such as
``logging``'s, run when a ``Popen`` with a ``preexec_fn`` forks; a ``__del__``; a weakref
callback) and reports it to :data:`sys.unraisablehook`. An interrupt whose handler ran there
was lost: a p2p bench stopped while starting a sandboxed process ran on to its last case
("Exception ignored in: <function _releaseLock>"). :func:`cancel_on_sigterm` (so
:func:`stop_on_signals` too) installs a hook that sends such an interrupt again, a moment
later, to be raised in ordinary code.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

CANCELLED_ERROR = "cancelled (SIGTERM)"


class RunCancelled(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM once :func:`cancel_on_sigterm` is installed.

    A ``KeyboardInterrupt`` on purpose: every place that already saves a run on Ctrl-C
    (checkpoints, ``run.json``, the p2p session) does the same for a cancel."""


class Flag:
    """A flag for a signal handler to set and any thread to read: a plain attribute, not a
    ``threading.Event``, whose ``set`` and ``clear`` take a lock. A handler runs in the main
    thread between two bytecodes, so a second SIGTERM could run one while the first held that
    lock, and the second waited for it forever: a command whose Ray worker was SIGKILLed got
    four SIGTERMs and hung, orphaned, instead of saving its run (issue 37)."""

    __slots__ = ("_value",)

    def __init__(self) -> None:
        self._value = False

    def set(self) -> None:
        self._value = True

    def clear(self) -> None:
        self._value = False

    def is_set(self) -> bool:
        return self._value


_terminated = Flag()
"""Set by the SIGTERM handler: signals are process-wide, so this flag is too."""


def termination_requested() -> bool:
    """Whether this process received SIGTERM (with :func:`cancel_on_sigterm` installed)."""
    return _terminated.is_set()


_resent = Flag()
"""Set while a SIGTERM whose :class:`RunCancelled` Python dropped is sent again."""

RESEND_DELAY_S = 0.05
"""How long after a dropped interrupt it is sent again: time for the code that dropped it (an
at-fork hook, a ``__del__``) to return, so the handler runs in code that can raise."""


def _on_sigterm(signum: int, frame: object) -> None:
    if _terminated.is_set() and not _resent.is_set():
        return  # a second SIGTERM must not break the first one's cleanup
    _terminated.set()
    _resent.clear()
    raise RunCancelled(CANCELLED_ERROR)


def cancel_on_sigterm() -> None:
    """Make SIGTERM unwind like Ctrl-C, so the run ends ``cancelled`` with its files intact
    (the ``langmarl`` command installs it; a no-op outside the main thread). An interrupt that
    Python dropped is sent again (:func:`resend_dropped_interrupts`)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
        resend_dropped_interrupts()


_interrupted = Flag()
"""Set by the SIGINT handler of :func:`stop_on_signals`."""


def interrupt_requested() -> bool:
    """Whether Ctrl-C (SIGINT) or SIGTERM reached this process since :func:`stop_on_signals`:
    the command then ends with the interrupt's exit code whoever caught the exception."""
    return _interrupted.is_set() or termination_requested()


def _on_sigint(signum: int, frame: object) -> None:
    _interrupted.set()
    raise KeyboardInterrupt


def stop_on_signals() -> None:
    """Ctrl-C ends a run ``stopped`` and SIGTERM ``cancelled``, both noted for
    :func:`interrupt_requested` (a no-op outside the main thread; an ignored SIGINT, as in
    a background job of a script, stays ignored)."""
    if threading.current_thread() is not threading.main_thread():
        return
    cancel_on_sigterm()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)


def resend_dropped_interrupts() -> None:
    """Make :data:`sys.unraisablehook` send a dropped interrupt again (installed once; other
    exceptions go on to the hook it replaced)."""
    if not isinstance(sys.unraisablehook, _DroppedHook):
        sys.unraisablehook = _DroppedHook(sys.unraisablehook)


class _DroppedHook:
    """``sys.unraisablehook``: an interrupt of our handlers that Python dropped is sent to this
    process again after :data:`RESEND_DELAY_S`; anything else goes to ``previous``."""

    def __init__(self, previous: Callable[[Any], object]) -> None:
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        dropped = unraisable.exc_value
        if isinstance(dropped, RunCancelled) and termination_requested():
            _resent.set()
            _send_later(signal.SIGTERM)
        elif isinstance(dropped, KeyboardInterrupt) and _interrupted.is_set():
            _send_later(signal.SIGINT)
        else:
            self.previous(unraisable)


def _send_later(signum: signal.Signals) -> None:
    timer = threading.Timer(RESEND_DELAY_S, os.kill, (os.getpid(), signum))
    timer.daemon = True
    timer.start()


@contextlib.contextmanager
def interrupts_cancel(
    cancel: Callable[[], object],
) -> Iterator[Callable[[], KeyboardInterrupt | None]]:
    """While inside, the first SIGTERM or Ctrl-C calls ``cancel`` instead of raising (its
    flags are set as usual); yields a function returning the interrupt that came
    (:class:`RunCancelled` or ``KeyboardInterrupt``, ``None`` while none did), for the
    caller to raise once the cancelled work has unwound.

    Only langmarl's own handlers (:func:`stop_on_signals`, :func:`cancel_on_sigterm`) are
    replaced, and only in the main thread; elsewhere this changes nothing. A second Ctrl-C
    raises at once (the user insists), a second SIGTERM is ignored, as without this."""
    received: list[KeyboardInterrupt] = []
    ours = {signal.SIGTERM: _on_sigterm, signal.SIGINT: _on_sigint}
    inside = [True]

    def deferred(signum: int, frame: FrameType | None) -> None:
        if not inside[0]:  # left installed: a restore below was cut short by an interrupt
            ours[signal.Signals(signum)](signum, frame)
            return
        try:
            ours[signal.Signals(signum)](signum, frame)  # sets the flags, raises the interrupt
        except KeyboardInterrupt as exc:
            if received and isinstance(exc, RunCancelled) and isinstance(received[0], RunCancelled):
                return  # a SIGTERM whose handler ran inside the first one's: already cancelling
            if received:
                raise
            received.append(exc)
            cancel()

    swapped = []
    if threading.current_thread() is threading.main_thread():
        swapped = [sig for sig, handler in ours.items() if signal.getsignal(sig) is handler]
    for sig in swapped:
        signal.signal(sig, deferred)
    try:
        yield lambda: received[0] if received else None
    finally:
        inside[0] = False
        for sig in swapped:
            if signal.getsignal(sig) is deferred:
                signal.signal(sig, ours[sig])
