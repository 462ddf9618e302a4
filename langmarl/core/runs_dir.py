"""The default runs root, in one place: where every space's runs land when no config or
command names another directory. The config classes (:mod:`langmarl.config.runs_root`), the
CLI, the jobs and the dashboard read it here; importing it loads nothing else."""

from __future__ import annotations

DEFAULT_RUNS_DIR = "runs"
"""The directory holding runs, relative to the working directory."""
