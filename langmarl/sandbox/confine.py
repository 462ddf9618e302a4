"""One confinement for all untrusted code, and the process that runs under it.

Every sandboxed process in langmarl starts here: :func:`langmarl.sandbox.run_python`
(verifiers, p2p reward validation, code judges, coding rewards, MAGRPO code checks) and the
p2p executor's PPO training processes. A :class:`Confinement` says what the process may
touch, a :class:`Target` what it runs (a script, ``-m module`` or ``-c code``), and
:meth:`ConfinedProcess.start` starts it through the start-up code (``_boot.py``) with a fresh
cgroup, an allow-listed environment and a status pipe.

Policy when a layer is missing (decided here, documented in ``docs/text_envs.md``):

* **required, fail closed** - the user, mount and network namespaces (no network; the tmpfs
  that caps the disk) and the rlimits: without them :meth:`ConfinedProcess.finish` raises
  :class:`~langmarl.core.errors.SandboxError` and nothing untrusted has run;
* **optional, degraded loudly** - the cgroup (total memory and processes; needs root or a
  delegated cgroup v2 subtree), Landlock (kernel >= 5.13) and seccomp (x86-64 and aarch64):
  the run goes on and :attr:`Outcome.degraded` lists what was missing and why.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict

from langmarl.core.errors import SandboxError
from langmarl.core.processes import parent_death_signal
from langmarl.sandbox.cgroup import SandboxCgroup
from langmarl.sandbox.models import SandboxLimits

SANDBOX_DIR = Path(__file__).resolve().parent
PACKAGE_DIR = SANDBOX_DIR.parent
"""langmarl itself stays readable: sandboxed harnesses import it."""
MODULES = {
    name: str(SANDBOX_DIR / f"{name}.py")
    for name in ("landlock", "seccomp", "_namespaces", "_mirror", "_hook")
}
"""The stdlib-only modules the start-up code loads by path (tests may swap one)."""
BOOT_SOURCE = (SANDBOX_DIR / "_boot.py").read_text(encoding="utf-8")
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
INHERITABLE_ENV = (
    "LANG", "LC_ALL", "LC_CTYPE", "TZ", "MUJOCO_GL", "PYOPENGL_PLATFORM", "EGL_PLATFORM",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "PYTHONHASHSEED",
)  # fmt: skip
"""The only variables :func:`inherit_environ` passes on: locale, rendering, thread counts."""
MIRROR_INTERVAL_S = 5.0
"""How often persisted directories are copied back to the real disk while the code runs."""
_MIB = 1024 * 1024
_SETUP_FAILED = 125


class Target(BaseModel):
    """What a confined interpreter runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["script", "module", "code"]
    """``script``: a file in the work dir; ``module``: like ``python -m``; ``code``: ``-c``."""
    name: str
    """The script's path, the module's name or the source code."""
    args: tuple[str, ...] = ()
    """``sys.argv[1:]``."""

    @classmethod
    def from_argv(cls, argv: Sequence[str]) -> Target:
        """``[python, "-m", module, *args]``, ``[python, "-c", code, *args]`` or
        ``[python, script, *args]``; the interpreter is always ``sys.executable``."""
        rest = list(argv[1:])
        if rest[:1] in (["-m"], ["-c"]) and len(rest) >= 2:
            kind: Literal["module", "code"] = "module" if rest[0] == "-m" else "code"
            return cls(kind=kind, name=rest[1], args=tuple(rest[2:]))
        if rest and not rest[0].startswith("-"):
            return cls(kind="script", name=rest[0], args=tuple(rest[1:]))
        raise SandboxError(
            f"cannot confine {list(argv)[:3]!r}: give [python, '-m', module, ...], "
            "[python, '-c', code, ...] or [python, script, ...]"
        )


class Confinement(BaseModel):
    """What a sandboxed process may touch."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workdir: Path
    """Its directory: cwd, HOME and TMPDIR (``workdir/tmp``); inside the sandbox a tmpfs of
    ``limits.max_disk_mb`` holding a copy of what the caller put there."""
    limits: SandboxLimits = SandboxLimits()
    persist: tuple[Path, ...] = ()
    """Existing directories on the real disk it may write: served from the same tmpfs and
    copied back (every ``MIRROR_INTERVAL_S`` and at exit), at most ``max_disk_mb`` in all."""
    readable: tuple[Path, ...] = (PACKAGE_DIR,)
    """Paths it may read besides the interpreter's own (``landlock.python_paths``)."""


def inherit_environ(environ: Mapping[str, str], names: Sequence[str] = INHERITABLE_ENV) -> dict:
    """The allow-listed variables of ``environ`` (nothing else: no keys, tokens, URLs)."""
    return {name: environ[name] for name in names if name in environ}


def environment(confinement: Confinement) -> dict[str, str]:
    """The whole environment of a confined process: a fixed base plus ``limits.extra_env``."""
    env = {
        "PATH": BASE_PATH,
        "HOME": str(confinement.workdir),
        "TMPDIR": str(confinement.workdir / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    env.update(confinement.limits.extra_env)
    return env


def boot_command(
    target: Target,
    confinement: Confinement,
    *,
    cgroup_procs: Sequence[str] = (),
    status_fd: int | None = None,
) -> list[str]:
    """The command line that starts ``target`` under ``confinement`` (see ``_boot.py``)."""
    limits = confinement.limits
    config = {
        "target": target.model_dump(mode="json"),
        "workdir": str(confinement.workdir.resolve()),
        "persist": [str(p.resolve()) for p in confinement.persist],
        "readable": [str(p.resolve()) for p in confinement.readable],
        "modules": {name.lstrip("_"): path for name, path in MODULES.items()},
        "status_fd": status_fd,
        "cgroup_procs": list(cgroup_procs),
        "allow_network": limits.allow_network,
        "allow_subprocess": limits.allow_subprocess,
        "allow_unix_sockets": limits.allow_unix_sockets,
        "memory_bytes": limits.memory_mb * _MIB,
        "cpu_s": math.ceil(limits.timeout_s * (os.cpu_count() or 1)) + 1,
        "file_bytes": limits.max_file_bytes,
        "nproc": limits.max_processes,
        "disk_bytes": limits.max_disk_mb * _MIB,
        "disk_inodes": max(1024, limits.max_disk_mb * 64),
        "mirror_interval_s": MIRROR_INTERVAL_S,
    }
    return [sys.executable, "-I", "-B", "-X", "utf8", "-c", BOOT_SOURCE, json.dumps(config)]


@dataclass
class Outcome:
    """How a confined process ended, and under which layers it ran."""

    returncode: int
    landlock_abi: int = 0
    seccomp: bool = False
    degraded: list[str] = field(default_factory=list)
    memory_exceeded: bool = False
    """The kernel OOM-killed a process at the cgroup's total memory limit."""
    memory_peak_mb: float | None = None


def _before_exec(cores: Sequence[int]) -> Callable[[], None]:
    """What the child runs before exec: SIGKILL when the thread that started it dies
    (:func:`~langmarl.core.processes.parent_death_signal`: a session SIGKILLed mid-training
    leaves no training process writing on into the run directory its resumed session
    trains again; the starting thread waits for the process, so it lives as long as the
    process should), and stay on ``cores`` if any are given."""
    chosen, parent = set(cores), os.getpid()
    tie = parent_death_signal(signal.SIGKILL)

    def run() -> None:
        tie()
        if os.getppid() != parent:  # the starter died before the tie was made
            os.kill(os.getpid(), signal.SIGKILL)
        if chosen:
            os.sched_setaffinity(0, chosen)

    return run


class ConfinedProcess:
    """A process started under a :class:`Confinement`; :meth:`finish` it exactly once."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        cgroup: SandboxCgroup | None,
        status_fd: int,
        degraded: list[str],
    ) -> None:
        self.popen = popen
        self.cgroup = cgroup
        self._status_fd = status_fd
        self._degraded = degraded
        self.memory_exceeded = False

    @classmethod
    def start(
        cls,
        target: Target,
        confinement: Confinement,
        *,
        stdin: int | IO[Any] | None = subprocess.DEVNULL,
        stdout: int | IO[Any] | None = subprocess.PIPE,
        stderr: int | IO[Any] | None = subprocess.PIPE,
        cores: Sequence[int] = (),
    ) -> ConfinedProcess:
        """Make the cgroup and start the process (its own session), pinned to ``cores``
        (``sched_setaffinity`` before it runs; its children inherit them) if any are given.

        Raises:
            SandboxError: the interpreter could not be started.
        """
        limits = confinement.limits
        (confinement.workdir / "tmp").mkdir(exist_ok=True)
        total = (limits.memory_mb + limits.max_disk_mb) * _MIB
        cgroup, why = SandboxCgroup.create(total, limits.max_processes)
        degraded = [f"{why}; total memory and processes are capped per process only"] if why else []
        status_read, status_write = os.pipe()
        command = boot_command(
            target,
            confinement,
            cgroup_procs=cgroup.procs_files if cgroup else (),
            status_fd=status_write,
        )
        try:
            popen = subprocess.Popen(
                command,
                cwd=confinement.workdir,
                env=environment(confinement),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
                pass_fds=(status_write,),
                preexec_fn=_before_exec(cores),
            )
        except OSError as exc:
            os.close(status_read)
            if cgroup is not None:
                cgroup.kill_all_and_remove()
            raise SandboxError(
                f"could not start the sandboxed interpreter {sys.executable}: {exc}"
            ) from exc
        finally:
            os.close(status_write)
        return cls(popen, cgroup, status_read, degraded)

    def poll(self) -> int | None:
        """The exit code, or None while it runs; stops the run at an OOM kill in its cgroup."""
        if self.cgroup is not None and not self.memory_exceeded and self.cgroup.oom_kills():
            self.memory_exceeded = True
            self.kill()
        return self.popen.poll()

    def kill(self) -> None:
        """SIGKILL the process group and every member of the cgroup."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill_all()

    def finish(self) -> Outcome:
        """Kill what is left, reap, remove the cgroup and read what the start-up code reported.

        Raises:
            SandboxError: a required layer could not be set up (nothing untrusted ran).
        """
        self.kill()
        returncode = self.popen.wait()
        peak = None
        if self.cgroup is not None:
            self.memory_exceeded = self.memory_exceeded or self.cgroup.oom_kills() > 0
            peak = self.cgroup.memory_peak()
            self.cgroup.kill_all_and_remove()
        facts = _read_status(self._status_fd)
        if returncode == _SETUP_FAILED and facts.get("error"):
            raise SandboxError(
                f"{facts['error'][0]} (see the sandbox section of docs/text_envs.md)"
            )
        landlock = facts.get("landlock", ["0"])[0]
        return Outcome(
            returncode=returncode,
            landlock_abi=int(landlock) if landlock.isdigit() else 0,
            seccomp=facts.get("seccomp", ["0"])[0] == "1",
            degraded=self._degraded + facts.get("degraded", []),
            memory_exceeded=self.memory_exceeded,
            memory_peak_mb=None if peak is None else peak / _MIB,
        )


def _read_status(fd: int) -> dict[str, list[str]]:
    """``key=value`` lines the start-up code wrote, by key."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while chunk := os.read(fd, 65536):
            data += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(fd)
    facts: dict[str, list[str]] = {}
    for line in data.decode("utf-8", errors="replace").splitlines():
        key, _, value = line.partition("=")
        facts.setdefault(key, []).append(value)
    return facts
