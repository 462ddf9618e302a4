"""The sandbox runs real subprocesses: each escape is contained and reported."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

import pytest

from langmarl.core.errors import SandboxError
from langmarl.sandbox import SandboxLimits, SandboxResult, run_python, run_python_async


def _gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (absent or a zombie awaiting its reaper)."""
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_runs_code_with_args_stdin_and_files() -> None:
    code = "import sys, helper\nprint(helper.twice(sys.stdin.read().strip()), sys.argv[1:])"
    result = run_python(
        code,
        files={"helper.py": "def twice(s):\n    return s * 2\n"},
        stdin="ab\n",
        args=["x", "y"],
    )
    assert result.ok, result.stderr
    assert result.stdout == "abab ['x', 'y']\n"
    assert result.returncode == 0 and result.killed_reason is None and not result.timed_out


def test_failing_code_is_a_result_not_an_exception() -> None:
    result = run_python("raise SystemExit(3)")
    assert not result.ok and result.returncode == 3 and result.killed_reason is None
    result = run_python("1/0")
    assert not result.ok and "ZeroDivisionError" in result.stderr


def test_cwd_home_and_tmpdir_are_the_fresh_sandbox_dir() -> None:
    code = (
        "import os, tempfile\n"
        "open('out.txt', 'w').write('x')\n"
        "print(os.getcwd() == os.environ['HOME'], tempfile.gettempdir().startswith(os.getcwd()))"
    )
    first = run_python(code)
    assert first.ok, first.stderr
    assert first.stdout.split() == ["True", "True"]
    second = run_python("import os; print(os.listdir('.'))")
    assert "out.txt" not in second.stdout  # each run starts empty


def test_infinite_loop_is_killed_with_its_whole_process_group() -> None:
    code = (
        "import os, sys, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    while True: time.sleep(1)\n"
        "print(pid, flush=True)\n"
        "while True: pass\n"
    )
    result = run_python(code, limits=SandboxLimits(timeout_s=1.0))
    assert result.timed_out and result.killed_reason == "timeout" and not result.ok
    assert result.returncode is None
    assert "timeout" in result.stderr
    assert _gone(int(result.stdout.split()[0]))


def test_children_that_leave_the_session_are_killed_too() -> None:
    code = (
        "import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(60)\n"
        "    os._exit(0)\n"
        "print(pid)\n"
    )
    result = run_python(code, limits=SandboxLimits(timeout_s=5.0))
    assert result.ok, result.stderr
    assert _gone(int(result.stdout.split()[0]))


def test_fork_bomb_is_contained_by_the_process_limit() -> None:
    code = (
        "import os, time\n"
        "children = []\n"
        "try:\n"
        "    while True:\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        children.append(pid)\n"
        "except OSError as exc:\n"
        "    print(len(children), *children, flush=True)\n"
        "    raise\n"
    )
    result = run_python(code, limits=SandboxLimits(timeout_s=10.0, max_processes=8))
    assert not result.ok and result.killed_reason == "process_limit", result.stderr
    count, *pids = (int(x) for x in result.stdout.split())
    # count is 0 when an unprivileged user already runs 8+ processes (RLIMIT_NPROC is per user)
    assert count < 8
    assert all(_gone(pid) for pid in pids)


def test_memory_bomb_hits_the_address_space_limit() -> None:
    result = run_python("x = bytearray(1024 ** 3)", limits=SandboxLimits(memory_mb=256))
    assert not result.ok and result.killed_reason == "memory_limit"
    assert "MemoryError" in result.stderr


def test_writing_outside_the_sandbox_is_blocked(tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    code = f"open({str(target)!r}, 'w').write('pwned')"
    result = run_python(code)
    assert not result.ok and result.killed_reason == "write_blocked"
    assert "[sandbox]" in result.stderr and not target.exists()
    result = run_python(f"import os; os.remove({str(tmp_path)!r})")
    assert result.killed_reason == "write_blocked" and tmp_path.exists()


def test_starting_other_programs_is_blocked_unless_allowed() -> None:
    result = run_python("import subprocess; subprocess.run(['true'])")
    assert result.killed_reason == "subprocess_blocked"
    allowed = run_python(
        "import subprocess; print(subprocess.run(['true']).returncode)",
        limits=SandboxLimits(allow_subprocess=True),
    )
    assert allowed.ok and allowed.stdout.strip() == "0", allowed.stderr


def test_secret_environment_variables_are_not_inherited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    result = run_python(
        "import os; print(sorted(os.environ)); print(os.environ.get('OPENAI_API_KEY'))",
        limits=SandboxLimits(extra_env={"MY_SETTING": "1"}),
    )
    assert result.ok and "sk-test-secret" not in result.stdout
    assert "'MY_SETTING'" in result.stdout and "OPENAI_API_KEY" not in result.stdout.split("\n")[0]
    parent = run_python("import os; print(open(f'/proc/{os.getppid()}/environ').read())")
    assert parent.killed_reason == "secret_blocked" and "sk-test-secret" not in parent.stdout


@pytest.fixture()
def listener() -> socket.socket:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    yield server  # type: ignore[misc]
    server.close()


def test_network_connection_to_a_local_port_fails(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    code = (
        f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "print('connected')"
    )
    result = run_python(code)
    assert not result.ok and result.killed_reason == "network_blocked"
    assert "connected" not in result.stdout
    allowed = run_python(code, limits=SandboxLimits(allow_network=True))
    assert allowed.ok and "connected" in allowed.stdout, allowed.stderr


def test_network_namespace_blocks_programs_outside_the_guard(listener: socket.socket) -> None:
    """A child program (no audit hook) still cannot reach the host: the namespace holds."""
    port = listener.getsockname()[1]
    inner = (
        f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); "
        "print('connected')"
    )
    code = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {inner!r}])"
    result = run_python(code, limits=SandboxLimits(allow_subprocess=True))
    assert "connected" not in result.stdout
    assert "OSError" in result.stderr or "Error" in result.stderr


def test_output_flood_is_cut_and_reported() -> None:
    result = run_python(
        "while True: print('x' * 1000)", limits=SandboxLimits(max_output_bytes=10_000)
    )
    assert result.killed_reason == "output_limit" and not result.ok
    assert len(result.stdout) < 10_200 and "truncated" in result.stdout


def test_asyncio_works_inside_the_sandbox() -> None:
    result = run_python("import asyncio\nprint(asyncio.run(asyncio.sleep(0, 'done')))")
    assert result.ok and result.stdout.strip() == "done", result.stderr


def test_file_names_must_stay_inside_the_sandbox() -> None:
    with pytest.raises(SandboxError, match="relative path"):
        run_python("pass", files={"../x.py": ""})


async def test_async_runs_concurrently() -> None:
    results = await asyncio.gather(*(run_python_async(f"print({i} * 2)") for i in range(3)))
    assert [r.stdout.strip() for r in results] == ["0", "2", "4"]
    assert all(isinstance(r, SandboxResult) and r.ok for r in results)


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        SandboxLimits(timeout_s=0)
    with pytest.raises(ValueError, match="extra"):
        SandboxLimits(memroy_mb=1)  # type: ignore[call-arg]


def test_no_sandbox_directories_are_left_behind() -> None:
    before = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    run_python("open('x', 'w').write('1')")
    after = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    assert not [name for name in after - before if name.startswith("langmarl-sandbox-")]
