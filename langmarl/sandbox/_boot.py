"""Start-up code of every sandboxed process (stdlib only; its source is passed with ``-c``).

Run as ``python -I -B -X utf8 -c <this source> <config json>`` (see ``confine.py``, which
writes the config). In order, before any untrusted code runs:

1. join the run's cgroups (total memory and process caps; the parent made them);
2. new user, mount and network namespaces (``_namespaces.py``; fails closed, see there);
3. empty tmpfs over ``/tmp``, ``/run``, ``/var/tmp``, ``/dev/shm`` (host services' Unix
   sockets) except for the paths the sandbox needs;
4. the sandbox directory becomes a tmpfs of ``disk_bytes`` (its files are copied in), and
   each persisted directory is served from that tmpfs too (``_mirror.py`` copies it in);
5. with persisted directories, fork: this process stays outside the remaining layers as the
   supervisor that mirrors them back to the real disk (at most ``disk_bytes``), the child
   goes on;
6. drop every capability, set the rlimits (address space, CPU, file size, processes, no
   core dumps), confine the file system with Landlock (``landlock.py``), load the seccomp
   filter (``seccomp.py``), install the audit hook (``_hook.py``);
7. run the target: a script, a module (``-m``) or a code string (``-c``).

The parent reads one ``key=value`` line per fact from ``config["status_fd"]``: ``landlock=N``
(the ABI; 0 without Landlock), ``seccomp=0|1``, ``degraded=<note>`` for each missing
optional layer, or ``error=<message>`` when a required layer failed, in which case the
process exits with status 125 before running anything.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import runpy
import select
import signal
import sys
import time
from types import ModuleType
from typing import Any, NoReturn

SETUP_FAILED = 125


class _Status:
    """The status pipe to the parent (a no-op without one)."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd

    def send(self, key: str, value: object) -> None:
        if self.fd is not None:
            text = str(value).replace("\n", " ")
            os.write(self.fd, f"{key}={text}\n".encode("utf-8", "replace"))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _load(name: str, path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_langmarl_sandbox_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the sandbox module {path!r}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _join_cgroups(procs_files: list[str]) -> None:
    for procs_file in procs_files:
        with open(procs_file, "w") as handle:
            handle.write(str(os.getpid()))


def _isolate(config: dict[str, Any], mods: dict[str, ModuleType]) -> tuple[list[str], list[Any]]:
    """Steps 2-4; returns the degradation notes and one outgoing mirror per persisted dir."""
    ns, mirror = mods["namespaces"], mods["mirror"]
    notes = [note] if (note := ns.enter(not config["allow_network"])) else []
    ns.make_private()
    read, execute = mods["landlock"].python_paths(config["allow_network"])
    workdir = config["workdir"]
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    old_workdir = os.open(workdir, flags)
    real_dirs = [os.open(p, flags) for p in config["persist"]]
    ns.hide([*read, *execute, *config["readable"]])
    ns.mount_tmpfs(workdir, config["disk_bytes"], config["disk_inodes"])
    scratch = os.open(workdir, flags)
    mirror.Mirror(old_workdir, scratch).sync(full=True)
    os.close(old_workdir)
    os.close(scratch)
    outgoing = []
    for index, (path, real) in enumerate(zip(config["persist"], real_dirs, strict=True)):
        staging = os.path.join(workdir, ".persist", str(index))
        os.makedirs(staging)
        staged = os.open(staging, flags)
        mirror.Mirror(real, staged).sync(full=True)
        os.makedirs(path, exist_ok=True)  # a mount point, when the path lies in a hidden dir
        ns.bind(staging, path)
        out = mirror.Mirror(staged, real, budget=config["disk_bytes"])
        out.baseline()
        outgoing.append(out)
    return notes, outgoing


def _supervise(child: int, mirrors: list[Any], interval: float, mods: dict[str, Any]) -> NoReturn:
    """Mirror the persisted dirs every ``interval`` s until ``child`` exits, then exit alike."""
    try:
        waiter: int | None = os.pidfd_open(child)
    except (AttributeError, OSError):
        waiter = None
    while True:
        if waiter is not None:
            select.select([waiter], [], [], interval)
        else:
            time.sleep(min(interval, 0.2))
        pid, wait_status = os.waitpid(child, os.WNOHANG)
        try:
            for out in mirrors:
                out.sync(full=pid != 0)
        except mods["mirror"].BudgetExceeded as exc:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            sys.stderr.write(f"[sandbox] killed: {exc.strerror} (disk_limit)\n")
            sys.stderr.flush()
            os._exit(1)
        if pid != 0:
            break
    if os.WIFSIGNALED(wait_status):
        number = os.WTERMSIG(wait_status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(wait_status) if not os.WIFSIGNALED(wait_status) else 1)


def _set_limits(config: dict[str, Any]) -> None:
    limits = {
        resource.RLIMIT_AS: config["memory_bytes"],
        resource.RLIMIT_CPU: config["cpu_s"],
        resource.RLIMIT_FSIZE: config["file_bytes"],
        resource.RLIMIT_NPROC: config["nproc"],
        resource.RLIMIT_CORE: 0,
    }
    for which, value in limits.items():
        _soft, hard = resource.getrlimit(which)
        capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (capped, capped))


def _confine(config: dict[str, Any], mods: dict[str, ModuleType], status: _Status) -> None:
    """Step 6: capabilities, rlimits, Landlock and seccomp, each reported on ``status``."""
    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("1000")  # the kernel's OOM killer takes sandboxed code first
    except OSError:
        pass
    mods["namespaces"].drop_capabilities()
    _set_limits(config)
    landlock = mods["landlock"]
    read, execute = landlock.python_paths(config["allow_network"])
    try:
        abi = landlock.confine(
            read=[*read, *config["readable"]],
            execute=execute,
            write=[config["workdir"], *config["persist"], os.devnull],
            allow_network=config["allow_network"],
        )
    except landlock.LandlockUnavailable as exc:
        abi = 0
        status.send("degraded", f"landlock: {exc.strerror}; only the audit hook guards files")
    status.send("landlock", abi)
    try:
        mods["seccomp"].install(
            allow_exec=config["allow_subprocess"],
            allow_network=config["allow_network"],
            allow_unix_sockets=config["allow_unix_sockets"],
        )
        status.send("seccomp", 1)
    except mods["seccomp"].SeccompUnavailable as exc:
        status.send("seccomp", 0)
        status.send("degraded", f"seccomp: {exc.strerror}; execve and sockets are not refused")


def _run_target(config: dict[str, Any]) -> None:
    kind, name, args = config["target"]["kind"], config["target"]["name"], config["target"]["args"]
    if kind == "script":
        sys.argv = [name, *args]
        sys.path.insert(0, config["workdir"])
        runpy.run_path(name, run_name="__main__")
    elif kind == "module":
        sys.argv = [name, *args]
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    else:
        sys.argv = ["-c", *args]
        namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        exec(compile(name, "<string>", "exec"), namespace)  # the target itself, already confined


def _die_with(parent: int) -> None:
    """SIGKILL this process when ``parent`` (the supervisor) dies, as the supervisor gets
    when its own starter dies (``prctl(PR_SET_PDEATHSIG)``, set by ``confine.py``)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() != parent:  # it died before the signal was set
        os._exit(SETUP_FAILED)


def main() -> None:
    """Set up every layer (fail closed on a required one), then run the target."""
    config = json.loads(sys.argv[1])
    status = _Status(config.get("status_fd"))
    mods = {name: _load(name, path) for name, path in config["modules"].items()}
    try:
        _join_cgroups(config["cgroup_procs"])
        notes, mirrors = _isolate(config, mods)
    except OSError as exc:
        status.send("error", f"sandbox setup failed: {exc}")
        os._exit(SETUP_FAILED)
    for note in notes:
        status.send("degraded", note)
    supervisor = os.getpid()
    if mirrors and (child := os.fork()) != 0:
        status.close()
        mods["namespaces"].drop_capabilities()
        _supervise(child, mirrors, config["mirror_interval_s"], mods)
    if mirrors:
        _die_with(supervisor)
    for out in mirrors:  # the code gets no descriptor of the real directories
        os.close(out.src)
        os.close(out.dst)
    _confine(config, mods, status)
    status.close()
    if not config["allow_subprocess"]:
        mods["hook"].block_fork_exec()
    os.chdir(config["workdir"])
    writable = [config["workdir"], *config["persist"], os.devnull]
    sys.addaudithook(
        mods["hook"].make_hook(
            writable,
            os.getpid(),
            allow_network=config["allow_network"],
            allow_subprocess=config["allow_subprocess"],
        )
    )
    del mods, status
    _run_target(config)


if __name__ == "__main__":
    main()
