"""The sandbox's audit hook (stdlib only; loaded by file path by ``_boot.py``).

The hook refuses, with a ``PermissionError`` whose message names a reason code: writing
outside the writable roots (``write_blocked``), reading another process's environment
(``secret_blocked``), sockets other than Unix-domain ones inside the sandbox, and DNS
(``network_blocked``), starting programs, raw ``syscall`` and the other native calls in
``NATIVE_DENY`` through ctypes, and ``_posixsubprocess.fork_exec`` (``subprocess_blocked``),
walking the garbage collector, tracing or profiling (``guard``: they reach other frames'
locals), and changing the hook's own code or defaults.

It keeps no state a program can rewrite: :func:`make_hook` builds it from the code of
:func:`_audit` with empty globals (no builtins either) and its whole configuration in an
immutable defaults tuple, so there are no closure cells, no module globals and no mutable
containers behind it for a traceback walk (``tb_frame`` -> ``f_back`` -> ``f_locals``) to
reach. It is still a Python-level guard: code that monkeypatches the standard library it
calls (``os.path.realpath``), or writes memory through ctypes, can fool it. The kernel layers
(namespaces, seccomp, Landlock, rlimits, cgroup) are what the sandbox guarantees.
"""

from __future__ import annotations

import os
import re
import socket
import types
from collections.abc import Callable, Iterable
from typing import Any

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
ONE_PATH_EVENTS = frozenset(
    {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate", "os.utime"}
    | {"shutil.rmtree"}
)
TWO_PATH_EVENTS = frozenset({"os.rename", "os.symlink", "os.link"})
EXEC_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile"}
)
INTROSPECTION_EVENTS = frozenset(
    {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile"}
    | {"sys.monitoring.register_callback"}
)
NATIVE_DENY = frozenset(
    {"socket", "connect", "bind", "sendto", "execve", "execv", "execvp", "execvpe", "execveat"}
    | {"system", "popen", "posix_spawn", "posix_spawnp", "fork", "vfork", "clone", "syscall"}
    | {"unshare", "setns", "setrlimit", "prlimit", "prlimit64", "ptrace", "mount", "capset"}
)
"""Native functions ctypes may not look up."""
NATIVE_DENY_PREFIXES = (
    "PyFrame_", "_PyFrame", "PyEval_Set", "_PyEval", "PyCell_Set", "PyFunction_Set",
    "PyThreadState_", "_PyThreadState", "PySys_", "_PySys",
)  # fmt: skip
"""C-API functions that rewrite frames, cells, functions or tracing (``ctypes.pythonapi``)."""
PROTECTED_ATTRIBUTES = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
SOCKET_ADDRESS_EVENTS = frozenset({"socket.bind", "socket.connect", "socket.sendto"})
SOCKET_ADDRESS_EVENTS |= {"socket.sendmsg"}
_ENVIRON = re.compile(r"^/proc/(\d+|thread-self)/(task/\d+/)?environ$")


def _audit(event: str, args: tuple[Any, ...], policy: Any = None, tools: Any = None) -> None:
    """Decide one audit event; every name it uses is a parameter (see :func:`make_hook`)."""
    roots, own_pid, allow_network, allow_subprocess, own_code = policy
    (realpath, fsdecode, isinstance_, type_, str_, bytes_, int_, function_type, refuse,
     environ_match, write_flags, one_path, two_paths, exec_events, introspection, native_deny,
     native_prefixes, protected, address_events, unix_families) = tools  # fmt: skip
    paths: tuple[Any, ...] = ()
    if event == "open":
        if isinstance_(args[0], int_):
            return
        real = realpath(fsdecode(args[0]))
        match = environ_match(real)
        if match and match.group(1) != own_pid:
            raise refuse(f"[sandbox] reading another process's environment is blocked "
                         f"(secret_blocked): {real}")  # fmt: skip
        mode, flags = args[1], args[2]
        writing = isinstance_(mode, str_) and ("w" in mode or "a" in mode or "x" in mode
                                               or "+" in mode)  # fmt: skip
        if writing or (isinstance_(flags, int_) and flags & write_flags):
            paths = (args[0],)
    elif event in one_path:
        paths = args[:1]
    elif event in two_paths:
        paths = args[:2]
    elif event.startswith("socket."):
        if allow_network or event == "socket.gethostname":
            return
        if event == "socket.__new__" and args[1] in unix_families:
            return
        address: Any = args[1] if event in address_events else 0
        if address is None:
            return  # sending on an already connected socket
        if isinstance_(address, bytes_):
            address = fsdecode(address)
        if isinstance_(address, str_) and address.startswith("\0"):
            return  # abstract Unix socket: per network namespace, and Landlock-scoped
        if isinstance_(address, str_) and address:
            paths = (address,)
        else:
            raise refuse(f"[sandbox] network access is blocked (network_blocked): {event}"
                         f"{str_(args[1:])[:200]}")  # fmt: skip
    elif event in exec_events and not allow_subprocess:
        raise refuse(f"[sandbox] starting another program is blocked (subprocess_blocked): "
                     f"{event}")  # fmt: skip
    elif event in introspection:
        raise refuse(f"[sandbox] {event} is blocked (guard): it can reach the sandbox's hook")
    elif event == "ctypes.dlsym" or event == "ctypes.dlsym/handle":
        name = str_(args[1])
        if name in native_deny or name.startswith(native_prefixes):
            raise refuse(f"[sandbox] calling the native function {name} is blocked "
                         f"(subprocess_blocked)")  # fmt: skip
    elif (
        event in ("object.__setattr__", "object.__delattr__")
        and args[1] in protected
        and type_(args[0]) is function_type
        and args[0].__code__ is own_code
    ):
        raise refuse("[sandbox] changing the audit hook is blocked (guard)")
    for path in paths:
        real = path if isinstance_(path, int_) else realpath(fsdecode(path))
        allowed = isinstance_(path, int_)
        for root in roots:
            if real == root or real.startswith(root + "/"):
                allowed = True
        if not allowed:
            raise refuse(f"[sandbox] {event} outside the sandbox directory is blocked "
                         f"(write_blocked): {real}")  # fmt: skip


def make_hook(
    writable: Iterable[str], own_pid: int, *, allow_network: bool, allow_subprocess: bool
) -> Callable[[str, tuple[Any, ...]], None]:
    """The hook for ``sys.addaudithook``: :func:`_audit` with its configuration frozen in."""
    code = _audit.__code__
    policy = (
        tuple(os.path.realpath(p) for p in writable),
        str(own_pid),
        bool(allow_network),
        bool(allow_subprocess),
        code,
    )
    tools = (
        os.path.realpath, os.fsdecode, isinstance, type, str, bytes, int, types.FunctionType,
        PermissionError, _ENVIRON.match, WRITE_FLAGS, ONE_PATH_EVENTS, TWO_PATH_EVENTS,
        EXEC_EVENTS, INTROSPECTION_EVENTS, NATIVE_DENY, NATIVE_DENY_PREFIXES, PROTECTED_ATTRIBUTES,
        SOCKET_ADDRESS_EVENTS, (int(socket.AF_UNIX), -1),
    )  # fmt: skip
    empty_globals: dict[str, Any] = {"__builtins__": {}}
    return types.FunctionType(code, empty_globals, "sandbox_audit_hook", (policy, tools))


def block_fork_exec() -> None:
    """Replace ``_posixsubprocess.fork_exec`` (what ``subprocess`` starts programs with) by a
    function that refuses; seccomp refuses ``execve`` underneath anyway."""
    import _posixsubprocess

    def fork_exec(*args: Any, **kwargs: Any) -> None:
        raise PermissionError(
            "[sandbox] starting another program is blocked (subprocess_blocked): "
            "_posixsubprocess.fork_exec"
        )

    _posixsubprocess.fork_exec = fork_exec  # type: ignore[assignment]
