"""One version: pyproject.toml's, kept in ``langmarl.core.version`` and recorded in runs."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import langmarl
from langmarl.core.version import __version__, code_version

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_pyprojects() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert __version__ == project["version"] == langmarl.__version__


def test_code_version_names_this_checkouts_commit() -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=False)  # fmt: skip
    recorded = code_version()
    assert recorded["langmarl"] == __version__
    if head.returncode == 0:  # a git checkout (a source archive has no commit to name)
        assert recorded["git_commit"] == head.stdout.strip()
    else:
        assert recorded["git_commit"] is None
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", __version__)
