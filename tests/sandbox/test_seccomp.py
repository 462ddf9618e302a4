"""The seccomp filter: its program, and the kernel refusing calls in a real child process."""

from __future__ import annotations

import itertools
import json
import platform
import subprocess
import sys

import pytest

from langmarl.sandbox import seccomp


def _refused_numbers(code: list[seccomp.Instruction]) -> set[int]:
    """System call numbers the program answers with EPERM right after comparing them."""
    return {
        insn[3]
        for insn, after in itertools.pairwise(code)
        if insn[0] == 0x15 and after == (0x06, 0, 0, seccomp.RET_EPERM)
    }


def test_the_program_refuses_exec_and_sockets_only_when_asked() -> None:
    numbers = seccomp.ARCHITECTURES["x86_64"][1]
    strict = seccomp.program(
        "x86_64", allow_exec=False, allow_network=False, allow_unix_sockets=False
    )
    loose = seccomp.program("x86_64", allow_exec=True, allow_network=True, allow_unix_sockets=True)
    assert strict[:3] == [(0x20, 0, 0, 4), (0x15, 1, 0, 0xC000003E), (0x06, 0, 0, 0x80000000)]
    assert {numbers["execve"], numbers["execveat"], numbers["socket"]} <= _refused_numbers(strict)
    assert numbers["execve"] not in _refused_numbers(loose)
    assert numbers["socket"] not in _refused_numbers(loose)
    assert {numbers["ptrace"], numbers["mount"], numbers["bpf"]} <= _refused_numbers(loose)
    assert strict[-1] == (0x06, 0, 0, seccomp.RET_ALLOW) == loose[-1]
    assert all(0 <= insn[1] < 256 and 0 <= insn[2] < 256 for insn in strict)


def test_unknown_architectures_are_unavailable_not_guessed() -> None:
    with pytest.raises(seccomp.SeccompUnavailable, match="riscv64"):
        seccomp.program("riscv64", allow_exec=False, allow_network=False, allow_unix_sockets=False)


_CHILD = """
import ctypes, json, os, socket, sys
sys.path.insert(0, {root!r})
from langmarl.sandbox import seccomp
seccomp.install(allow_exec=False, allow_network=False, allow_unix_sockets=True)
report = {{}}
def attempt(name, action):
    try:
        action()
        report[name] = "allowed"
    except OSError as exc:
        report[name] = exc.errno
attempt("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
attempt("pair", lambda: socket.socketpair())
libc = ctypes.CDLL(None, use_errno=True)
report["unshare"] = ctypes.get_errno() if libc.unshare(0x40000000) else "allowed"
attempt("fork", lambda: os.waitpid(os.fork() or os._exit(0), 0))
print(json.dumps(report), flush=True)
os.execv("/bin/true", ["/bin/true"])
"""


def test_the_kernel_refuses_what_the_filter_lists() -> None:
    from pathlib import Path

    root = str(Path(seccomp.__file__).parents[2])
    done = subprocess.run(
        [sys.executable, "-c", _CHILD.format(root=root)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and "PermissionError: [Errno 1]" in done.stderr, done.stderr
    report = json.loads(done.stdout)
    expected = {"inet": 1, "unix": "allowed", "pair": "allowed", "unshare": 1, "fork": "allowed"}
    assert report == expected, platform.machine()
