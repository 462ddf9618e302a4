"""Start-up code of a sandboxed interpreter (stdlib only; its source is passed with ``-c``).

Run as ``python -I -B -X utf8 -c <this source> <config json> <script> [args…]``. Before the
user's script runs it: joins the run's pids cgroup, moves into a fresh network namespace (when
the kernel allows), sets the resource limits, confines the file system with Landlock (when the
kernel offers it; see ``landlock.py``) and installs an audit hook that refuses writes outside
the sandbox directory, network sockets and DNS, starting other programs, reading other
processes' environments, and walking the garbage collector (which could reach the hook's
state). The hook is a Python-level guard: code that loads native libraries could get around
it; the kernel-level barriers are the limits, the namespace, the cgroup and Landlock.

The Landlock ABI used (0: unavailable, only the hook guards the file system) is written to the
status descriptor ``config["status_fd"]``, which is closed before the user's script runs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import resource
import runpy
import socket
import sys
from collections.abc import Callable
from typing import Any

_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {
    "os.remove": 1,
    "os.rename": 2,
    "os.rmdir": 1,
    "os.mkdir": 1,
    "os.symlink": 2,
    "os.link": 2,
    "os.chmod": 1,
    "os.chown": 1,
    "os.truncate": 1,
    "os.utime": 1,
    "shutil.rmtree": 1,
}
_EXEC_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile"}
)
_GC_EVENTS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
_NATIVE_DENY = frozenset(
    {"socket", "connect", "bind", "sendto", "execve", "execv", "execvp", "system", "popen"}
    | {"posix_spawn", "unshare", "setns", "setrlimit", "prlimit", "prlimit64", "fork"}
)
_ENVIRON = re.compile(r"^/proc/(\d+|thread-self)/(task/\d+/)?environ$")


def _join_cgroup(procs_file: str | None) -> None:
    if procs_file:
        with open(procs_file, "w") as handle:
            handle.write(str(os.getpid()))


def _unshare_network() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        flags = _CLONE_NEWNET if os.geteuid() == 0 else _CLONE_NEWUSER | _CLONE_NEWNET
        libc.unshare(flags)  # failure leaves the socket guard as the only barrier
    except (OSError, AttributeError):
        pass


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


def _confine(config: dict[str, Any]) -> int:
    """Landlock: read Python and the system libraries (``python_paths``), write only the
    sandbox dir.

    Returns the ABI version used, 0 when the kernel has no Landlock.
    """
    spec = importlib.util.spec_from_file_location("_sandbox_landlock", config["landlock_module"])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the Landlock module {config['landlock_module']!r}")
    landlock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(landlock)
    read, execute = landlock.python_paths(config["allow_network"])
    try:
        return int(
            landlock.confine(
                read=[*read, *config["readable"]],
                execute=execute,
                write=config["writable"],
                allow_network=config["allow_network"],
            )
        )
    except landlock.LandlockUnavailable:
        return 0


def _report_status(fd: int | None, landlock_abi: int) -> None:
    if fd is not None:
        os.write(fd, f"landlock={landlock_abi}\n".encode())
        os.close(fd)


def _make_hook(config: dict[str, Any]) -> Callable[[str, tuple[Any, ...]], None]:
    roots = tuple(os.path.realpath(p) for p in config["writable"])
    allow_network = bool(config["allow_network"])
    allow_subprocess = bool(config["allow_subprocess"])
    own_pid = str(os.getpid())

    def inside(path: Any) -> bool:
        if isinstance(path, int):
            return True  # an already-open descriptor
        real = os.path.realpath(os.fsdecode(path))
        return any(real == root or real.startswith(root + os.sep) for root in roots)

    def deny(action: str, code: str, what: str) -> None:
        raise PermissionError(f"[sandbox] {action} is blocked ({code}): {what}")

    def check_open(path: Any, mode: Any, flags: Any) -> None:
        if isinstance(path, int):
            return
        match = _ENVIRON.match(os.path.realpath(os.fsdecode(path)))
        if match and match.group(1) != own_pid:
            deny("reading another process's environment", "secret_blocked", os.fsdecode(path))
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if writing and not inside(path):
            deny("writing outside the sandbox directory", "write_blocked", os.fsdecode(path))

    def check_socket(event: str, args: tuple[Any, ...]) -> None:
        if event == "socket.__new__" and args[1] in (socket.AF_UNIX, -1):
            return  # local pairs (asyncio's self-pipe); path addresses are refused below
        deny("network access", "network_blocked", f"{event}{args[1:]!r}"[:200])

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            check_open(*args[:3])
        elif event in _PATH_EVENTS:
            for path in args[: _PATH_EVENTS[event]]:
                if not inside(path):
                    deny(f"{event} outside the sandbox directory", "write_blocked", str(path))
        elif not allow_network and (
            event.startswith("socket.") and event not in ("socket.gethostname",)
        ):
            check_socket(event, args)
        elif not allow_subprocess and event in _EXEC_EVENTS:
            deny("starting another program", "subprocess_blocked", event)
        elif event in _GC_EVENTS:
            deny("walking the garbage collector", "guard", event)
        elif event == "ctypes.dlsym" and str(args[1]) in _NATIVE_DENY:
            deny("calling a native system function", "subprocess_blocked", str(args[1]))

    return hook


def main() -> None:
    """Apply the limits and guards, then run the user's script as ``__main__``."""
    config = json.loads(sys.argv[1])
    script, args = sys.argv[2], sys.argv[3:]
    _join_cgroup(config.get("cgroup_procs"))
    if not config["allow_network"]:
        _unshare_network()
    _set_limits(config)
    _report_status(config.get("status_fd"), _confine(config))
    os.chdir(config["workdir"])
    sys.path.insert(0, config["workdir"])
    sys.argv = [script, *args]
    sys.addaudithook(_make_hook(config))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
