"""Kernel-enforced file-system confinement with Linux Landlock (stdlib only).

``confine(read=..., write=..., execute=...)`` restricts the calling thread, and every process
it starts afterwards, to the listed paths: any other file or directory can no longer be
opened, created, removed or renamed, whatever the path, symlink or ``dir_fd`` used to reach
it. Unless ``allow_network=True``, TCP bind and connect are refused too (ABI >= 4), and the
process can no longer signal processes, or reach abstract Unix sockets, outside its domain
(ABI >= 6). The restriction cannot be undone.

Call it before starting any thread: only the calling thread (and its future children) is
confined. This module imports nothing from langmarl: the sandbox's start-up code loads it
by file path.

As a program it confines itself, then replaces itself with a command (which stays
confined; Landlock only - untrusted code should start through ``confine.py``, which adds the
namespaces, seccomp, rlimits, cgroup and audit hook)::

    python landlock.py [--read P]... [--write P]... [--execute P]... [--allow-network] \
        -- PROGRAM [ARG...]

Without Landlock it says so on stderr and runs the command unconfined; with
``--require`` it exits with status 3 instead.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import stat
import struct
import sys
from collections.abc import Iterable

# Syscall numbers (the same on every architecture but alpha) and flags.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# File-system access rights, by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
_FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: REFER, 3: TRUNCATE, 5: IOCTL_DEV}
# Network rights (ABI 4) and scopes (ABI 6).
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The only rights a rule on a non-directory may carry."""
READ = READ_FILE | READ_DIR
"""Rights given to ``confine(read=...)`` paths."""
RUN = READ | EXECUTE
"""Rights given to ``confine(execute=...)`` paths."""
_MAKE = MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
WRITE = READ | WRITE_FILE | TRUNCATE | IOCTL_DEV | REFER | REMOVE_DIR | REMOVE_FILE | _MAKE
"""Rights given to ``confine(write=...)`` paths."""

_UNAVAILABLE = (errno.ENOSYS, errno.EOPNOTSUPP)

_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/bin")
_ETC_FILES = ("ld.so.cache", "localtime", "passwd", "group", "nsswitch.conf")
_NETWORK_ETC = ("resolv.conf", "hosts", "host.conf", "gai.conf", "services", "protocols", "ssl")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
_SYSTEM_INFO = ("/proc/cpuinfo", "/proc/self")  # PyOpenGL (mujoco.egl) reads cpuinfo


class LandlockUnavailable(OSError):
    """The running kernel offers no Landlock (too old, or disabled at boot); nothing changed."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(libc: ctypes.CDLL, number: int, *args: object) -> int:
    result = libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock syscall {number}: {os.strerror(code)}")
    return int(result)


def abi_version() -> int:
    """The Landlock ABI version the kernel offers; 0 when Landlock is unavailable."""
    try:
        return _syscall(_libc(), _SYS_CREATE_RULESET, None, ctypes.c_size_t(0),
                        ctypes.c_uint32(_CREATE_RULESET_VERSION))  # fmt: skip
    except (OSError, AttributeError):  # no Landlock, or no libc syscall() (not Linux)
        return 0


def handled_fs_rights(abi: int) -> int:
    """Every file-system right ABI ``abi`` knows (all are denied unless a rule allows them)."""
    rights = 0
    for since, bits in _FS_RIGHTS_BY_ABI.items():
        if abi >= since:
            rights |= bits
    return rights


def ruleset_attr(abi: int, allow_network: bool) -> bytes:
    """``struct landlock_ruleset_attr``, cut to the size ABI ``abi`` knows.

    The fields are ``handled_access_fs`` (ABI 1), ``handled_access_net`` (ABI 4) and
    ``scoped`` (ABI 6), each a u64.
    """
    net = 0 if allow_network else _NET_BIND_TCP | _NET_CONNECT_TCP
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    if abi >= 6:
        return struct.pack("=QQQ", handled_fs_rights(abi), net, scoped)
    if abi >= 4:
        return struct.pack("=QQ", handled_fs_rights(abi), net)
    return struct.pack("=Q", handled_fs_rights(abi))


def python_paths(allow_network: bool = False) -> tuple[list[str], list[str]]:
    """What the running interpreter and its native libraries need: ``(read, execute)``.

    Read: every directory on ``sys.path`` and ``PYTHONPATH``, a few ``/etc`` files
    (``ld.so.cache``, ``localtime``, ``passwd``, ``group``, ``nsswitch.conf``; the resolver's
    files and ``/etc/ssl`` too with ``allow_network``), ``/dev/{null,zero,urandom,random}``,
    ``/proc/cpuinfo`` and this process's own ``/proc/<pid>``. Execute (and read):
    ``sys.prefix``, ``sys.base_prefix``, the interpreter's directory, ``/usr``, ``/lib``,
    ``/lib64`` and ``/bin``.
    """
    extra = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    etc = _ETC_FILES + (_NETWORK_ETC if allow_network else ())
    read = [
        *(p for p in [*sys.path, *extra] if p and os.path.isdir(p)),
        *(os.path.join("/etc", name) for name in etc),
        *_DEVICES,
        *_SYSTEM_INFO,
    ]
    interpreter = os.path.dirname(os.path.realpath(sys.executable))
    return read, [sys.prefix, sys.base_prefix, interpreter, *_SYSTEM_DIRS]


def confine(
    *,
    read: Iterable[str | os.PathLike[str]] = (),
    write: Iterable[str | os.PathLike[str]] = (),
    execute: Iterable[str | os.PathLike[str]] = (),
    allow_network: bool = False,
) -> int:
    """Allow only the listed paths from now on, for this thread and its future children.

    Each path is a file or a directory tree; paths that do not exist are skipped. Rights
    add up when a path is listed twice or lies under another listed path.

    Args:
        read: May be opened for reading, and listed (directories).
        write: May also be written, truncated, and have entries created, removed and renamed
            inside (directories).
        execute: May also be executed (and read): interpreters, shared libraries, tools.
        allow_network: Leave TCP bind/connect alone (otherwise refused, ABI >= 4).

    Returns:
        The ABI version the restriction was made with.

    Raises:
        LandlockUnavailable: the kernel has no Landlock; the process is left unrestricted.
        OSError: a rule could not be added (the process is then left unrestricted too).
    """
    libc = _libc()
    abi = abi_version()
    if abi < 1:
        raise LandlockUnavailable(errno.EOPNOTSUPP, "Landlock is not available on this kernel")
    handled = handled_fs_rights(abi)
    attr = ruleset_attr(abi, allow_network)
    try:
        ruleset = _syscall(libc, _SYS_CREATE_RULESET, ctypes.c_char_p(attr),
                           ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))  # fmt: skip
    except OSError as exc:
        if exc.errno in _UNAVAILABLE:
            raise LandlockUnavailable(exc.errno, f"Landlock is unavailable: {exc}") from exc
        raise
    try:
        for paths, rights in ((read, READ), (execute, RUN), (write, WRITE)):
            for path in paths:
                _add_rule(libc, ruleset, os.fspath(path), rights & handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0),
                      ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:  # fmt: skip
            code = ctypes.get_errno()
            raise OSError(code, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(code)}")
        _syscall(libc, _SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)
    return abi


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= _FILE_RIGHTS
        rule = struct.pack("=Qi", rights, fd)  # packed struct landlock_path_beneath_attr
        _syscall(libc, _SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                 ctypes.c_char_p(rule), ctypes.c_uint32(0))  # fmt: skip
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    """Confine as the options say, then ``exec`` the command after ``--`` (see above)."""
    parser = argparse.ArgumentParser(prog="python landlock.py", description=__doc__.split("\n")[0])
    for name, what in (("read", "read"), ("write", "write"), ("execute", "run")):
        parser.add_argument(f"--{name}", action="append", default=[], help=f"A path to {what}.")
    parser.add_argument("--python", action="store_true", help="Add python_paths().")
    parser.add_argument("--allow-network", action="store_true", help="Leave TCP alone.")
    parser.add_argument("--require", action="store_true", help="Fail without Landlock.")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- PROGRAM [ARG...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    read, execute = python_paths(args.allow_network) if args.python else ([], [])
    try:
        confine(read=[*read, *args.read], write=args.write, execute=[*execute, *args.execute],
                allow_network=args.allow_network)  # fmt: skip
    except LandlockUnavailable as exc:
        print(f"landlock: {exc.strerror}; running {command[0]} unconfined", file=sys.stderr)
        if args.require:
            return 3
    os.execv(command[0], command)


if __name__ == "__main__":
    sys.exit(main())
