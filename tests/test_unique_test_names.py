"""Test modules outside a package must have unique file names: pytest imports them by
basename, and a clash fails the whole collection (it did, twice, in this project)."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parent


def test_test_module_names_are_unique_outside_packages() -> None:
    loose = [
        path.name
        for path in TESTS.rglob("test_*.py")
        if not (path.parent / "__init__.py").is_file()
    ]
    clashes = sorted(name for name, count in Counter(loose).items() if count > 1)
    assert clashes == [], f"rename one of each: {clashes}"
