"""Renamed config keys and command-line options: the old name keeps working for one release
and says so in one line, naming the new name and what the old value is read as.

Why a log record and not ``warnings.warn(..., DeprecationWarning)``: Python hides a
``DeprecationWarning`` unless it is raised in ``__main__``, and the CLI routes warnings
through logging with their source line appended (two lines). A rename the user has to act
on must show, in one line, wherever the config is read: a command, a job's log, or the
Python API (where logging without handlers still prints WARNING records to stderr).
"""

from __future__ import annotations

import logging

logger = logging.getLogger("langmarl.deprecation")


def deprecated(old: str, instead: str, read_as: str = "such") -> None:
    """Log ``"`old` is deprecated: use <instead>; it is read as <read_as> for now"``.

    Args:
        old: The old name, e.g. ``experiment_dir`` or ``--dir``.
        instead: What to write now, e.g. ``"`runs_dir` (the directory holding runs)"``.
        read_as: What the old value means today (default: the same as ``instead``).
    """
    logger.warning("`%s` is deprecated: use %s; it is read as %s for now", old, instead, read_as)
