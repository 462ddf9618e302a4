"""A small seccomp-BPF filter: refuse the system calls sandboxed code never needs (stdlib only).

``install(allow_exec=..., allow_network=..., allow_unix_sockets=...)`` confines the calling
thread and every process it starts afterwards; it cannot be undone. Refused calls fail with
``EPERM`` (Python: ``PermissionError: [Errno 1] Operation not permitted``):

* always: ``ptrace``, ``process_vm_readv/writev``, the mount API (``mount``, ``umount2``,
  ``pivot_root``, ``chroot``, ``open_tree``, ``move_mount``, ``fs*``, ``mount_setattr``),
  ``setns``, ``unshare`` and ``clone`` with a namespace flag, ``bpf``, ``perf_event_open``,
  the keyring, ``userfaultfd``, ``open_by_handle_at``, ``io_uring``, module loading,
  ``kexec``, ``reboot``, ``swapon/off``, ``acct``, ``quotactl``; ``clone3`` fails with
  ``ENOSYS`` (its flags are out of a filter's reach, so libc falls back to ``clone``);
  system calls of another ABI (i386 or x32 on x86-64) kill the process;
* unless ``allow_exec``: ``execve`` and ``execveat`` (no other program can start, however the
  code reaches the system call: ``subprocess``, ``_posixsubprocess``, ctypes ``syscall``);
* unless ``allow_network``: ``socket`` for every family but ``AF_UNIX``, and ``AF_UNIX`` too
  unless ``allow_unix_sockets`` (``socketpair`` stays: asyncio needs it).

Only x86-64 and aarch64 are known; elsewhere :func:`install` raises
:class:`SeccompUnavailable` and changes nothing. This module imports nothing from langmarl:
the sandbox's start-up code loads it by file path.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
# BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_EPERM = 0x00050000 | errno.EPERM
RET_ENOSYS = 0x00050000 | errno.ENOSYS
# Offsets in struct seccomp_data: nr, arch, then args[0] (its low 32 bits, little-endian).
_NR, _ARCH, _ARG0 = 0, 4, 16
_AF_UNIX = 1
_X32_BIT = 0x40000000
_NAMESPACE_FLAGS = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET."""

_ALWAYS_REFUSED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root",
    "chroot", "setns", "unshare", "bpf", "perf_event_open", "keyctl", "add_key", "request_key",
    "userfaultfd", "open_by_handle_at", "name_to_handle_at", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct",
    "quotactl", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
)  # fmt: skip
_X86_64 = dict(
    ptrace=101, process_vm_readv=310, process_vm_writev=311, mount=165, umount2=166,
    pivot_root=155, chroot=161, setns=308, unshare=272, bpf=321, perf_event_open=298,
    keyctl=250, add_key=248, request_key=249, userfaultfd=323, open_by_handle_at=304,
    name_to_handle_at=303, kexec_load=246, kexec_file_load=320, init_module=175,
    finit_module=313, delete_module=176, reboot=169, swapon=167, swapoff=168, acct=163,
    quotactl=179, io_uring_setup=425, io_uring_enter=426, io_uring_register=427, open_tree=428,
    move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433, mount_setattr=442,
    clone=56, clone3=435, execve=59, execveat=322, socket=41,
)  # fmt: skip
_AARCH64 = dict(
    ptrace=117, process_vm_readv=270, process_vm_writev=271, mount=40, umount2=39,
    pivot_root=41, chroot=51, setns=268, unshare=97, bpf=280, perf_event_open=241,
    keyctl=219, add_key=217, request_key=218, userfaultfd=282, open_by_handle_at=265,
    name_to_handle_at=264, kexec_load=104, kexec_file_load=294, init_module=105,
    finit_module=273, delete_module=106, reboot=142, swapon=224, swapoff=225, acct=89,
    quotactl=60, io_uring_setup=425, io_uring_enter=426, io_uring_register=427, open_tree=428,
    move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433, mount_setattr=442,
    clone=220, clone3=435, execve=221, execveat=281, socket=198,
)  # fmt: skip
ARCHITECTURES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, _X86_64),  # AUDIT_ARCH_X86_64
    "aarch64": (0xC00000B7, _AARCH64),  # AUDIT_ARCH_AARCH64
}

Instruction = tuple[int, int, int, int]
"""``(code, jt, jf, k)``: one ``struct sock_filter``."""


class SeccompUnavailable(OSError):
    """No filter for this architecture, or the kernel refused it; nothing changed."""


def program(
    machine: str, *, allow_exec: bool, allow_network: bool, allow_unix_sockets: bool
) -> list[Instruction]:
    """The BPF program for ``machine`` (``platform.machine()``), as in the module docstring.

    Raises:
        SeccompUnavailable: ``machine`` is not x86_64 or aarch64.
    """
    if machine not in ARCHITECTURES:
        raise SeccompUnavailable(errno.ENOSYS, f"no seccomp filter for architecture {machine}")
    arch, numbers = ARCHITECTURES[machine]
    code: list[Instruction] = [
        (_LD_ABS, 0, 0, _ARCH),
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, RET_KILL_PROCESS),
        (_LD_ABS, 0, 0, _NR),
    ]
    if machine == "x86_64":
        code += [(_JGE, 0, 1, _X32_BIT), (_RET, 0, 0, RET_KILL_PROCESS)]
    refused = list(_ALWAYS_REFUSED) + ([] if allow_exec else ["execve", "execveat"])
    if not allow_network and not allow_unix_sockets:
        refused.append("socket")
    for name in refused:
        code += [(_JEQ, 0, 1, numbers[name]), (_RET, 0, 0, RET_EPERM)]
    code += [(_JEQ, 0, 1, numbers["clone3"]), (_RET, 0, 0, RET_ENOSYS)]
    if not allow_network and allow_unix_sockets:
        code += _argument_check(numbers["socket"], _JEQ, _AF_UNIX, RET_ALLOW, RET_EPERM)
    code += _argument_check(numbers["clone"], _JSET, _NAMESPACE_FLAGS, RET_EPERM, RET_ALLOW)
    code.append((_RET, 0, 0, RET_ALLOW))
    return code


def _argument_check(nr: int, test: int, value: int, hit: int, miss: int) -> list[Instruction]:
    """For system call ``nr``: return ``hit`` if ``test(args[0], value)`` holds, else ``miss``;
    other calls fall through."""
    return [
        (_JEQ, 0, 4, nr),
        (_LD_ABS, 0, 0, _ARG0),
        (test, 0, 1, value),
        (_RET, 0, 0, hit),
        (_RET, 0, 0, miss),
    ]


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def install(*, allow_exec: bool, allow_network: bool, allow_unix_sockets: bool) -> None:
    """Load the filter for this process (and its future children). Single-threaded callers only.

    Raises:
        SeccompUnavailable: unknown architecture, or the kernel has no seccomp filters.
    """
    code = program(
        platform.machine(),
        allow_exec=allow_exec,
        allow_network=allow_network,
        allow_unix_sockets=allow_unix_sockets,
    )
    filters = (_SockFilter * len(code))(*(_SockFilter(*insn) for insn in code))
    fprog = _SockFprog(len(code), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    zero = ctypes.c_ulong(0)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), zero, zero, zero) != 0:
        code_ = ctypes.get_errno()
        raise SeccompUnavailable(code_, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(code_)}")
    if libc.prctl(_PR_SET_SECCOMP, ctypes.c_ulong(_SECCOMP_MODE_FILTER), ctypes.byref(fprog),
                  zero, zero) != 0:  # fmt: skip
        code_ = ctypes.get_errno()
        raise SeccompUnavailable(code_, f"prctl(PR_SET_SECCOMP): {os.strerror(code_)}")
