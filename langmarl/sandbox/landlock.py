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
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
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
