"""Third-party noise stays out of the CLI's output: foreign Python warnings, math-verify's
timeout notice, transformers' notices and tqdm bars are routed through logging and shown
only with -v; langmarl's own warnings still show."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from langmarl.cli.common import PACKAGE_DIR

CHILD = textwrap.dedent(
    """
    import logging, os, sys, warnings
    from langmarl.cli.common import setup_logging

    setup_logging(verbose=sys.argv[1] == "-v")
    warnings.warn_explicit("foreign deprecation", FutureWarning, "/x/torch/nn/module.py", 1)
    warnings.warn_explicit("our warning", UserWarning, sys.argv[2] + "/p2p/loop.py", 1)
    logging.getLogger("math_verify.grader").warning("Timeout is disabled")
    print(os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS"), os.environ.get("TRANSFORMERS_VERBOSITY"))
    """
)


def run(flag: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "default"}
    return subprocess.run(
        [sys.executable, "-c", CHILD, flag, PACKAGE_DIR],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip


def test_without_verbose_only_langmarl_warnings_show() -> None:
    done = run("-q")
    assert done.returncode == 0, done.stderr
    assert "our warning" in done.stderr and done.stderr.startswith("WARNING py.warnings:")
    assert "foreign deprecation" not in done.stderr
    assert "Timeout is disabled" not in done.stderr
    assert done.stdout.split() == ["1", "error"]


def test_verbose_shows_everything() -> None:
    done = run("-v")
    assert done.returncode == 0, done.stderr
    for text in ("our warning", "foreign deprecation", "Timeout is disabled"):
        assert text in done.stderr
    assert done.stdout.split() == ["None", "None"]
