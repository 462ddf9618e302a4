"""The sandbox runs real subprocesses: each escape is contained and reported."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from langmarl.core.errors import SandboxError
from langmarl.core.processes import stat_fields
from langmarl.sandbox import SandboxLimits, SandboxResult, run_python, run_python_async


def _gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (absent or a zombie awaiting its reaper)."""
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        fields = stat_fields(pid)
        if fields is None or fields[0] in ("Z", "X"):
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


_SECRET = "sk-launch-env-secret-4f9a"
_PROBE_PARENT_ENVIRON = """
import os
ppid = os.getppid()
def attempt(name, read):
    try:
        print(name, read())
    except OSError as exc:
        print(name, "refused", type(exc).__name__, exc.errno)
def via_dir_fd(flags):
    d = os.open(f"/proc/{ppid}", flags)
    return os.read(os.open("environ", os.O_RDONLY, dir_fd=d), 100000)
attempt("env", lambda: dict(os.environ))
attempt("open", lambda: open(f"/proc/{ppid}/environ", "rb").read())
attempt("dir_fd", lambda: via_dir_fd(os.O_RDONLY))
attempt("o_path", lambda: via_dir_fd(os.O_PATH))
attempt("task", lambda: open(f"/proc/{ppid}/task/{ppid}/environ", "rb").read())
"""
_PARENT = """
import json, sys
from langmarl.sandbox import run_python
own = open("/proc/self/environ", "rb").read()
result = run_python(sys.stdin.read())
print(json.dumps({"parent_has_secret": SECRET.encode() in own, **result.model_dump()}))
"""


def test_secret_in_the_launch_environment_never_reaches_the_program() -> None:
    """The secret is in the parent's real /proc/<pid>/environ; no way of reading it works."""
    parent = _PARENT.replace("SECRET", repr(_SECRET))
    env = {**os.environ, "LANGMARL_TEST_SECRET": _SECRET}
    done = subprocess.run(
        [sys.executable, "-c", parent], input=_PROBE_PARENT_ENVIRON, env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["parent_has_secret"]  # so reading it would show it
    assert report["ok"], report["stderr"]
    assert _SECRET not in report["stdout"] and _SECRET not in report["stderr"]
    lines = dict(line.split(" ", 1) for line in report["stdout"].splitlines())
    assert set(lines) == {"env", "open", "dir_fd", "o_path", "task"}
    assert "LANGMARL_TEST_SECRET" not in lines["env"]
    for name in ("open", "dir_fd", "o_path", "task"):
        assert lines[name].startswith("refused PermissionError"), (name, lines[name])


def test_dir_fd_write_outside_the_sandbox_is_blocked(visible_dir: Path) -> None:
    for flags in ("os.O_RDONLY", "os.O_PATH"):
        code = (
            f"import os\nfd = os.open({str(visible_dir)!r}, {flags})\n"
            "os.open('escaped.txt', os.O_WRONLY | os.O_CREAT, dir_fd=fd)\n"
        )
        result = run_python(code)
        assert not result.ok and result.killed_reason == "fs_blocked", result.stderr
        assert "PermissionError" in result.stderr
        assert not (visible_dir / "escaped.txt").exists()


def test_dir_fd_read_of_the_parent_environment_is_blocked() -> None:
    code = (
        "import os\nd = os.open(f'/proc/{os.getppid()}', os.O_RDONLY)\n"
        "print(os.read(os.open('environ', os.O_RDONLY, dir_fd=d), 100000))\n"
    )
    result = run_python(code)
    assert not result.ok and result.killed_reason == "fs_blocked", result.stderr
    assert result.stdout == ""


def test_reading_files_outside_the_allowed_paths_is_blocked(visible_dir: Path) -> None:
    private = visible_dir / "private.txt"
    private.write_text("do not read")
    result = run_python(f"print(open({str(private)!r}).read())")
    assert result.killed_reason == "fs_blocked" and "do not read" not in result.stdout
    result = run_python("import os; print(os.listdir('/tmp'))")
    assert result.killed_reason == "fs_blocked" and result.stdout == ""


def test_programs_started_by_the_code_stay_confined(visible_dir: Path) -> None:
    """A child interpreter has no audit hook; Landlock still refuses the write."""
    target = visible_dir / "escaped.txt"
    inner = f"open({str(target)!r}, 'w').write('pwned')"
    code = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {inner!r}], check=True)"
    result = run_python(code, limits=SandboxLimits(allow_subprocess=True))
    assert not result.ok and "PermissionError" in result.stderr
    assert not target.exists()


def test_signals_to_processes_outside_the_sandbox_are_refused() -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        result = run_python(f"import os, signal; os.kill({bystander.pid}, signal.SIGKILL)")
        assert not result.ok and "PermissionError" in result.stderr
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_host_tmp_and_run_are_empty_inside(tmp_path: Path) -> None:
    """/tmp, /run, /var/tmp and /dev/shm (host services' Unix sockets) are empty tmpfs."""
    (tmp_path / "secret.txt").write_text("host file")
    code = (
        "import os, sys\n"
        "for path in [sys.argv[1], '/run', '/tmp', '/var/tmp', '/dev/shm']:\n"
        "    print(path, os.path.exists(path), os.path.exists(path) and os.stat(path).st_nlink)\n"
    )
    result = run_python(code, args=[str(tmp_path / "secret.txt")])
    assert result.ok, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("False False")  # the host's file is not there at all
    assert all(line.split()[1] == "True" for line in lines[1:])


def test_ordinary_programs_still_work_under_landlock() -> None:
    """Positive control: write and read back in the workdir, read stdlib sources, import."""
    code = (
        "import os, json, sqlite3, tempfile, inspect\n"
        "os.makedirs('sub/dir')\n"
        "with open('sub/dir/data.json', 'w') as f: json.dump({'a': 1}, f)\n"
        "os.rename('sub/dir/data.json', 'moved.json')\n"
        "with tempfile.NamedTemporaryFile('w', delete=False) as f: f.write('t')\n"
        "print(json.load(open('moved.json'))['a'], len(inspect.getsource(json)) > 100)\n"
        "print(open(os.devnull).read() == '', len(os.urandom(4)))\n"
        "print(open(f'/proc/{os.getpid()}/status').read().startswith('Name'))\n"
        "os.remove('moved.json'); os.rmdir('sub/dir')\n"
    )
    result = run_python(code)
    assert result.ok, result.stderr
    assert result.stdout.split() == ["1", "True", "True", "4", "True"]
    assert result.landlock_abi >= 1


def test_without_landlock_the_audit_hook_still_guards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel without Landlock: the run says so (landlock_abi=0, a warning), the hook holds."""
    import langmarl.sandbox.confine as confine

    stub = tmp_path / "no_landlock.py"
    stub.write_text(
        "class LandlockUnavailable(OSError):\n    pass\n"
        "def python_paths(allow_network):\n    return [], []\n"
        "def confine(**kwargs):\n    raise LandlockUnavailable(95, 'no Landlock')\n"
    )
    monkeypatch.setitem(confine.MODULES, "landlock", str(stub))
    target = tmp_path / "escaped.txt"
    with pytest.warns(RuntimeWarning, match="without some of its layers: landlock"):
        result = run_python(f"open({str(target)!r}, 'w').write('pwned')")
    assert result.landlock_abi == 0 and result.killed_reason == "write_blocked"
    assert [note.split(":")[0] for note in result.degraded] == ["landlock"]
    assert not target.exists()


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


def test_huge_file_hits_the_file_size_limit() -> None:
    code = "open('big', 'wb').write(b'x' * 2_000_000)"
    result = run_python(code, limits=SandboxLimits(max_file_bytes=1_000_000))
    assert not result.ok and result.killed_reason == "file_size_limit", result.stderr


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


def test_no_sandbox_directories_are_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a temp root of its own: other tests running at the same time make sandboxes too
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = run_python("import os; open('x', 'w').write('1'); print(os.getcwd())")
    assert "langmarl-sandbox-" in result.stdout  # it ran in a sandbox directory ...
    assert os.listdir(tmp_path) == []  # ... which is gone
