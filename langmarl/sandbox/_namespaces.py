"""Namespaces, mounts and capabilities of a sandboxed process (stdlib only; loaded by file path).

The start-up code (``_boot.py``) calls, in order:

1. :func:`enter` - a new user, mount and (unless the network is allowed) network namespace.
   The user namespace maps the caller's own uid/gid, so root and ordinary users take the same
   path and the code holds no capability outside its namespaces. Root on a kernel without
   user namespaces falls back to mount + network namespaces (reported as degraded, the
   capabilities are dropped anyway); anyone else fails with :class:`SetupError`.
2. :func:`hide` - empty tmpfs over the directories where host services keep their Unix
   sockets (``/tmp``, ``/run``, ``/var/tmp``, ``/dev/shm``), re-exposing only the paths the
   sandbox needs from them by bind mounts.
3. :func:`mount_tmpfs` - the sandbox directory becomes a tmpfs of a fixed size, so the total
   the code can write is capped (its pages count in the memory cgroup too).
4. :func:`drop_capabilities` - empty bounding, ambient, effective and permitted sets.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Iterable

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
HIDDEN_DIRS = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm")
_USERNS_HINT = (
    "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
    "user.max_user_namespaces > 0; on Ubuntu also kernel.apparmor_restrict_unprivileged_userns"
    "=0) or run as root"
)


class SetupError(OSError):
    """A required confinement layer could not be set up; the sandbox must not run the code."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise SetupError(code, f"{what}: {os.strerror(code)}")


def enter(isolate_network: bool) -> str | None:
    """Unshare the namespaces; return a degradation note, or ``None`` when fully isolated.

    Raises:
        SetupError: no namespace could be created (the network would not be isolated).
    """
    libc = _libc()
    net = CLONE_NEWNET if isolate_network else 0
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | net) == 0:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
        return None
    user_error = os.strerror(ctypes.get_errno())
    if uid == 0 and libc.unshare(CLONE_NEWNS | net) == 0:
        return (
            f"user_namespace: unavailable ({user_error}); running as root in new mount and "
            "network namespaces with every capability dropped"
        )
    raise SetupError(
        errno.EPERM,
        f"cannot create the sandbox's user/mount/network namespaces ({user_error}): {_USERNS_HINT}",
    )


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as exc:
        raise SetupError(exc.errno, f"writing {path!r}: {exc.strerror}; {_USERNS_HINT}") from exc


def make_private() -> None:
    """Stop mount events from propagating back to the host (``mount --make-rprivate /``)."""
    _check(_libc().mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")


def mount_tmpfs(target: str, size_bytes: int, inodes: int, mode: str = "0700") -> None:
    """Mount a tmpfs of ``size_bytes`` and ``inodes`` files on ``target`` (created if absent)."""
    os.makedirs(target, exist_ok=True)
    options = f"size={size_bytes},nr_inodes={inodes},mode={mode}".encode()
    result = _libc().mount(b"tmpfs", os.fsencode(target), b"tmpfs", MS_NOSUID | MS_NODEV, options)
    _check(result, f"mounting a tmpfs on {target}")


def bind(source: str, target: str) -> None:
    """Bind-mount ``source`` (a path or ``/proc/self/fd/N``) on ``target``."""
    result = _libc().mount(os.fsencode(source), os.fsencode(target), None, MS_BIND | MS_REC, None)
    _check(result, f"bind-mounting {source} on {target}")


def hide(keep: Iterable[str], dirs: Iterable[str] = HIDDEN_DIRS) -> list[str]:
    """Cover each of ``dirs`` with an empty tmpfs, then bind the ``keep`` paths under it back.

    A directory that is one of ``keep`` or lies above one of them is left alone. Returns the
    directories hidden (symlinks such as ``/var/run`` count once, by their target).
    """
    wanted = sorted({os.path.realpath(path) for path in keep if os.path.exists(path)})
    hidden: list[str] = []
    for directory in dict.fromkeys(os.path.realpath(d) for d in dirs if os.path.isdir(d)):
        if any(path == directory or directory.startswith(path + os.sep) for path in wanted):
            continue
        inside = [path for path in wanted if path.startswith(directory + os.sep)]
        inside = [p for p in inside if not any(p.startswith(q + os.sep) for q in inside)]
        handles = [os.open(path, os.O_PATH | os.O_CLOEXEC) for path in inside]
        try:
            mount_tmpfs(directory, 1 << 20, 4096, mode="0755")
            for path, handle in zip(inside, handles, strict=True):
                _mount_point(path, os.path.isdir(f"/proc/self/fd/{handle}"))
                bind(f"/proc/self/fd/{handle}", path)
        finally:
            for handle in handles:
                os.close(handle)
        hidden.append(directory)
    return hidden


def _mount_point(path: str, is_dir: bool) -> None:
    if is_dir:
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))


def drop_capabilities() -> None:
    """Empty every capability set; a later ``execve`` (even of a set-uid file) regains none."""
    libc = _libc()
    try:
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            last = int(handle.read())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0))  # fmt: skip
    libc.prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), ctypes.c_ulong(0),
               ctypes.c_ulong(0), ctypes.c_ulong(0))  # fmt: skip
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable} words, all zero
    _check(libc.capset(header, data), "capset (dropping every capability)")
