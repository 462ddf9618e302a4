"""Which code produced a run: the langmarl version and, in a git checkout, its commit."""

from __future__ import annotations

import contextlib
import functools
import subprocess
from pathlib import Path

__version__ = "0.1.0"
"""The package version (pyproject.toml says the same; a test checks that they agree)."""


@functools.cache
def code_version() -> dict[str, str | None]:
    """The langmarl version and, in a git checkout, its commit (``None`` otherwise)."""
    commit = None
    package = Path(__file__).resolve().parents[1]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "HEAD"],
            cwd=package,
            capture_output=True,
            text=True,
            timeout=5,
        )
        lines = done.stdout.split() if done.returncode == 0 else []
        # only langmarl's own checkout: an installed copy may sit inside another repository
        if len(lines) == 2 and Path(lines[0]).resolve() == package.parent:
            commit = lines[1]
    return {"langmarl": __version__, "git_commit": commit}
