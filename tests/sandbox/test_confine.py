"""The shared confinement: targets, environment, persisted dirs, and the policy per layer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import langmarl.sandbox.confine as confine
from langmarl.core.errors import SandboxError
from langmarl.sandbox import SandboxLimits, run_python
from langmarl.sandbox.confine import ConfinedProcess, Confinement, Target, inherit_environ
from langmarl.testing.processes import alive


def test_targets_from_command_lines() -> None:
    python = sys.executable
    assert Target.from_argv([python, "-m", "pkg.mod", "--x", "1"]) == Target(
        kind="module", name="pkg.mod", args=("--x", "1")
    )
    assert Target.from_argv([python, "-c", "print(1)", "a"]).kind == "code"
    assert Target.from_argv([python, "main.py"]).name == "main.py"
    with pytest.raises(SandboxError, match="cannot confine"):
        Target.from_argv([python, "-X", "dev"])


def test_only_allow_listed_variables_are_inherited() -> None:
    environ = {"OMP_NUM_THREADS": "2", "DATABASE_URL": "postgres://u:pw@h/db", "TOKEN": "t"}
    environ |= {"PATH": "/evil", "LD_PRELOAD": "/tmp/x.so", "PYTHONPATH": "/tmp"}
    assert inherit_environ(environ) == {"OMP_NUM_THREADS": "2"}


def test_a_persisted_dir_gets_results_back_but_no_more_than_the_disk_limit(
    tmp_path: Path, visible_dir: Path
) -> None:
    run_dir = visible_dir / "run"
    run_dir.mkdir()
    (run_dir / "config.json").write_text("{}")
    code = (
        "import os, sys\nrun = sys.argv[1]\n"
        "print(open(os.path.join(run, 'config.json')).read())\n"
        "open(os.path.join(run, 'summary.json'), 'w').write('done')\n"
        "try:\n    open(os.path.join(run, 'huge.bin'), 'wb').write(b'x' * 30_000_000)\n"
        "except OSError as exc:\n    print(exc.strerror)\n"
    )
    limits = SandboxLimits(max_disk_mb=8, max_file_bytes=64_000_000)
    confinement = Confinement(workdir=tmp_path, persist=(run_dir,), limits=limits)
    process = ConfinedProcess.start(
        Target(kind="code", name=code, args=(str(run_dir),)), confinement
    )
    out, err = process.popen.communicate(timeout=60)
    outcome = process.finish()
    assert outcome.returncode == 0, err
    assert out.decode().split("\n")[:2] == ["{}", "No space left on device"]
    assert (run_dir / "summary.json").read_text() == "done"
    total = sum(p.stat().st_size for p in run_dir.iterdir())
    assert total <= 8 * 1024 * 1024 and outcome.degraded == [] and outcome.seccomp


def test_without_namespaces_the_sandbox_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A required layer missing: nothing runs, and the error says how to enable it."""
    stub = tmp_path / "no_namespaces.py"
    real = confine.MODULES["_namespaces"]
    stub.write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('real', {real!r})\n"
        "real = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(real)\n"
        "globals().update({k: v for k, v in vars(real).items() if not k.startswith('__')})\n"
        "def enter(isolate_network):\n"
        "    raise SetupError(1, 'cannot create the namespaces (test): ' + _USERNS_HINT)\n"
    )
    monkeypatch.setitem(confine.MODULES, "_namespaces", str(stub))
    marker = tmp_path / "ran.txt"
    with pytest.raises(SandboxError, match=r"sandbox setup failed.*unprivileged user namespaces"):
        run_python(f"open({str(marker)!r}, 'w').write('ran')")
    assert not marker.exists()


def test_without_a_cgroup_the_run_goes_on_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        confine.SandboxCgroup, "create", classmethod(lambda cls, *a, **k: (None, "cgroup: none"))
    )
    with pytest.warns(RuntimeWarning, match="cgroup: none"):
        result = run_python("print('ran')")
    assert result.ok and result.stdout == "ran\n" and result.memory_peak_mb is None
    assert result.degraded == [
        "cgroup: none; total memory and processes are capped per process only"
    ]


def test_the_boot_command_runs_a_module_confined(tmp_path: Path) -> None:
    command = confine.boot_command(
        Target(kind="module", name="json.tool", args=("--compact",)),
        Confinement(workdir=tmp_path),
    )
    done = subprocess.run(command, input='{"a": [1, 2]}', capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"a":[1,2]}'


def test_a_confined_process_runs_pinned_to_the_cores_given(tmp_path: Path) -> None:
    import os

    last = sorted(os.sched_getaffinity(0))[-1]
    code = "import os\nprint(sorted(os.sched_getaffinity(0)))\n"
    confinement = Confinement(workdir=tmp_path, limits=SandboxLimits())
    process = ConfinedProcess.start(Target(kind="code", name=code), confinement, cores=(last,))
    out, err = process.popen.communicate(timeout=60)
    assert process.finish().returncode == 0, err
    assert out.decode().strip() == f"[{last}]"


STARTER = """
import sys
from pathlib import Path
from langmarl.sandbox import SandboxLimits
from langmarl.sandbox.confine import ConfinedProcess, Confinement, Target

workdir, persisted = Path(sys.argv[1]), Path(sys.argv[2])
code = "import os, sys, time\\nprint(os.getpid(), flush=True)\\ntime.sleep(120)\\n"
confinement = Confinement(workdir=workdir, limits=SandboxLimits(timeout_s=300),
                          persist=(persisted,))
process = ConfinedProcess.start(Target(kind="code", name=code), confinement)
print(process.popen.pid, process.popen.stdout.readline().decode().strip(), flush=True)
process.popen.wait()
"""


def test_a_confined_process_dies_with_the_process_that_started_it(
    tmp_path: Path, visible_dir: Path
) -> None:
    """SIGKILL of the starter (a session killed mid-training) ends the confined process and,
    with a persisted dir, the forked child running the target: nothing writes on into a run
    directory that a resumed session trains again."""
    import os
    import signal
    import time

    persisted = visible_dir / "run"
    persisted.mkdir()
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(tmp_path), str(persisted)],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert starter.stdout is not None
    pids = [int(pid) for pid in starter.stdout.readline().split()]
    assert len(pids) == 2 and pids[0] != pids[1]  # the supervisor and the target's process
    starter.send_signal(signal.SIGKILL)
    starter.wait()

    deadline = time.monotonic() + 60  # a safety net: the signal is immediate
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in pids), [os.getpid(), pids]
