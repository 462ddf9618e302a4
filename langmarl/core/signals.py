"""How a langmarl process turns SIGINT and SIGTERM into a saved run.

Ctrl-C ends a run ``stopped``; SIGTERM (``langmarl jobs cancel``, a cluster scheduler) ends it
``cancelled``. Both unwind the same way: :class:`RunCancelled` is a ``KeyboardInterrupt``,
so every handler of Ctrl-C saves what it can for SIGTERM too. Signals are process-wide, so the
flags kept here are too; the ``langmarl`` command installs the handlers
(:func:`stop_on_signals`).
"""

from __future__ import annotations

import signal
import threading

CANCELLED_ERROR = "cancelled (SIGTERM)"


class RunCancelled(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM once :func:`cancel_on_sigterm` is installed.

    A ``KeyboardInterrupt`` on purpose: every place that already saves a run on Ctrl-C
    (checkpoints, ``run.json``, the p2p session) does the same for a cancel."""


_terminated = threading.Event()
"""Set by the SIGTERM handler: signals are process-wide, so this flag is too."""


def termination_requested() -> bool:
    """Whether this process received SIGTERM (with :func:`cancel_on_sigterm` installed)."""
    return _terminated.is_set()


def _on_sigterm(signum: int, frame: object) -> None:
    if _terminated.is_set():  # a second SIGTERM must not break the first one's cleanup
        return
    _terminated.set()
    raise RunCancelled(CANCELLED_ERROR)


def cancel_on_sigterm() -> None:
    """Make SIGTERM unwind like Ctrl-C, so the run ends ``cancelled`` with its files intact
    (the ``langmarl`` command installs it; a no-op outside the main thread)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)


_interrupted = threading.Event()
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
