"""Fixtures of the sandbox tests."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmarl.sandbox._namespaces import HIDDEN_DIRS


@pytest.fixture
def visible_dir() -> Iterator[Path]:
    """A host directory the sandbox can see but not touch (pytest's ``tmp_path`` lies under
    ``/tmp``, which the sandbox covers with an empty tmpfs, so attacks on it fail earlier)."""
    home = Path.home().resolve()
    hidden = [Path(d).resolve() for d in HIDDEN_DIRS]
    assert not any(home == d or d in home.parents for d in hidden), f"HOME {home} is hidden"
    with tempfile.TemporaryDirectory(prefix=".langmarl-sandbox-test-", dir=home) as path:
        yield Path(path)
