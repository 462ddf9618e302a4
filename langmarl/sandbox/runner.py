"""Run untrusted Python in a contained subprocess.

Each run gets a fresh temporary directory as its working directory (and HOME and TMPDIR), a
minimal environment (nothing inherited: no API keys), a new session whose whole process
group is killed on timeout and after exit, resource limits (address space, CPU, file size,
processes), a pids cgroup when running as root, a fresh network namespace when the kernel
allows, a Landlock file-system barrier when the kernel offers one (``landlock.py``) and an
audit-hook guard (see ``_boot.py``). See ``docs/text_envs.md`` for what is and is not
prevented.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path, PurePosixPath
from typing import IO

from langmarl.core.errors import SandboxError
from langmarl.sandbox.cgroup import PidsCgroup
from langmarl.sandbox.models import SandboxLimits, SandboxResult

SCRIPT_NAME = "main.py"
_BOOT_SOURCE = (Path(__file__).with_name("_boot.py")).read_text()
_LANDLOCK_MODULE = Path(__file__).with_name("landlock.py")
PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""langmarl itself stays readable: sandboxed harnesses import it (an editable install keeps it
off ``sys.path``)."""
_DEFAULT_LIMITS = SandboxLimits()
_GUARD_REASONS = (
    "network_blocked",
    "write_blocked",
    "subprocess_blocked",
    "secret_blocked",
)


def run_python(
    code: str,
    *,
    limits: SandboxLimits = _DEFAULT_LIMITS,
    files: dict[str, str] | None = None,
    stdin: str | None = None,
    args: list[str] | None = None,
) -> SandboxResult:
    """Run ``code`` as a script in a fresh sandbox and wait for it.

    Args:
        code: The Python source, run as ``__main__`` from ``main.py`` in the sandbox dir.
        limits: Time, memory, process, output and network limits.
        files: Extra files to create first, relative path → text (importable from ``code``).
        stdin: Text fed to the program's standard input (none: it reads EOF).
        args: Command-line arguments (``sys.argv[1:]``).

    Returns:
        The result; a failing or killed program is a result, not an exception.

    Raises:
        SandboxError: if a file path escapes the sandbox dir or the interpreter cannot start.
    """
    with tempfile.TemporaryDirectory(prefix="langmarl-sandbox-") as tmp:
        workdir = Path(tmp)
        _write_files(workdir, code, files or {})
        cgroup = PidsCgroup.create(limits.max_processes)
        try:
            return _run(workdir, limits, cgroup, stdin, args or [])
        finally:
            if cgroup is not None:
                cgroup.kill_all_and_remove()


async def run_python_async(
    code: str,
    *,
    limits: SandboxLimits = _DEFAULT_LIMITS,
    files: dict[str, str] | None = None,
    stdin: str | None = None,
    args: list[str] | None = None,
) -> SandboxResult:
    """:func:`run_python` without blocking the event loop (runs in a worker thread).

    Cancelling the awaiting task does not stop the program early; ``limits.timeout_s`` does.
    """
    return await asyncio.to_thread(
        run_python, code, limits=limits, files=files, stdin=stdin, args=args
    )


def _write_files(workdir: Path, code: str, files: dict[str, str]) -> None:
    (workdir / "tmp").mkdir()
    for name, text in {**files, SCRIPT_NAME: code}.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise SandboxError(
                f"sandbox file name {name!r} must be a relative path inside the sandbox "
                "(no leading '/', no '..')"
            )
        target = workdir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def _environment(workdir: Path, limits: SandboxLimits) -> dict[str, str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir),
        "TMPDIR": str(workdir / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    }
    env.update(limits.extra_env)
    return env


def _command(
    workdir: Path,
    limits: SandboxLimits,
    cgroup: PidsCgroup | None,
    args: list[str],
    status_fd: int,
) -> list[str]:
    config = {
        "workdir": str(workdir),
        "writable": [str(workdir), "/dev/null"],
        "readable": [str(PACKAGE_DIR)],
        "landlock_module": str(_LANDLOCK_MODULE),
        "status_fd": status_fd,
        "allow_network": limits.allow_network,
        "allow_subprocess": limits.allow_subprocess,
        "memory_bytes": limits.memory_mb * 1024 * 1024,
        "cpu_s": math.ceil(limits.timeout_s) + 1,
        "file_bytes": limits.max_file_bytes,
        "nproc": limits.max_processes,
        "cgroup_procs": cgroup.procs_file if cgroup else None,
    }
    boot = [sys.executable, "-I", "-B", "-X", "utf8", "-c", _BOOT_SOURCE, json.dumps(config)]
    return [*boot, SCRIPT_NAME, *args]


class _Capture:
    """Reads one stream into memory up to a byte limit, in a thread."""

    def __init__(self, stream: IO[bytes], limit: int, on_overflow: threading.Event) -> None:
        self.data = bytearray()
        self.overflowed = False
        self._stream, self._limit, self._on_overflow = stream, limit, on_overflow
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while chunk := self._stream.read1(65536):  # type: ignore[attr-defined]
            room = self._limit - len(self.data)
            self.data += chunk[: max(room, 0)]
            if len(chunk) > room and not self.overflowed:
                self.overflowed = True
                self._on_overflow.set()
        self._stream.close()

    def text(self) -> str:
        self.thread.join(timeout=5.0)
        suffix = f"\n[sandbox] output truncated at {self._limit} bytes" if self.overflowed else ""
        return self.data.decode("utf-8", errors="replace") + suffix


def _run(
    workdir: Path,
    limits: SandboxLimits,
    cgroup: PidsCgroup | None,
    stdin: str | None,
    args: list[str],
) -> SandboxResult:
    start = time.monotonic()
    status_read, status_write = os.pipe()
    try:
        proc = subprocess.Popen(
            _command(workdir, limits, cgroup, args, status_write),
            cwd=workdir,
            env=_environment(workdir, limits),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=(status_write,),
        )
    except OSError as exc:
        os.close(status_read)
        raise SandboxError(
            f"could not start the sandboxed interpreter {sys.executable}: {exc}"
        ) from exc
    finally:
        os.close(status_write)
    overflow = threading.Event()
    assert proc.stdout is not None and proc.stderr is not None  # PIPE was requested
    out = _Capture(proc.stdout, limits.max_output_bytes, overflow)
    err = _Capture(proc.stderr, limits.max_output_bytes, overflow)
    if stdin is not None:
        threading.Thread(target=_feed, args=(proc, stdin), daemon=True).start()
    timed_out = _wait(proc, limits.timeout_s, overflow)
    _kill_group(proc.pid, cgroup)
    returncode = proc.wait()
    landlock_abi = _read_status(status_read)
    if landlock_abi == 0:
        warnings.warn(
            "the sandbox ran without Landlock (the kernel offers none): only the audit hook "
            "guarded the file system; see docs/text_envs.md",
            RuntimeWarning,
            stacklevel=2,
        )
    stdout, stderr = out.text(), err.text()
    overflowed = out.overflowed or err.overflowed
    reason = _killed_reason(returncode, stderr, timed_out, overflowed, landlock_abi)
    if timed_out:
        stderr += f"\n[sandbox] killed after the {limits.timeout_s}s timeout (whole process group)"
    return SandboxResult(
        ok=returncode == 0 and reason is None,
        returncode=None if timed_out else returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        killed_reason=reason,
        duration_s=time.monotonic() - start,
        landlock_abi=landlock_abi,
    )


def _read_status(fd: int) -> int:
    """The Landlock ABI the start-up code reported (0: none, or it died before reporting)."""
    os.set_blocking(fd, False)
    try:
        text = os.read(fd, 256).decode("ascii", errors="replace")
    except BlockingIOError:
        text = ""
    finally:
        os.close(fd)
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "landlock" and value.isdigit():
            return int(value)
    return 0


def _feed(proc: subprocess.Popen[bytes], text: str) -> None:
    assert proc.stdin is not None  # PIPE was requested
    try:
        proc.stdin.write(text.encode("utf-8"))
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the program exited without reading all of it


def _wait(proc: subprocess.Popen[bytes], timeout_s: float, overflow: threading.Event) -> bool:
    """Wait for exit, an output overflow or the timeout; True if the timeout hit."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            proc.wait(timeout=min(0.05, max(deadline - time.monotonic(), 0.0)))
            return False
        except subprocess.TimeoutExpired:
            if overflow.is_set():
                return False
            if time.monotonic() >= deadline:
                return True


def _kill_group(pgid: int, cgroup: PidsCgroup | None) -> None:
    """Kill everything the run left behind: its process group, and its cgroup if any."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    if cgroup is not None:
        for pid in cgroup.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _killed_reason(
    returncode: int, stderr: str, timed_out: bool, overflowed: bool, landlock_abi: int
) -> str | None:
    if timed_out:
        return "timeout"
    if overflowed:
        return "output_limit"
    if returncode < 0:
        return _SIGNAL_REASONS.get(-returncode) or f"signal {_signal_name(-returncode)}"
    if returncode == 0:
        return None
    for reason in _GUARD_REASONS:
        if f"({reason})" in stderr:
            return reason
    if landlock_abi and "[Errno 13]" in stderr:
        return "fs_blocked"  # Landlock refused a file (or TCP) access the audit hook let through
    if "MemoryError" in stderr:
        return "memory_limit"
    if "[Errno 27]" in stderr:  # EFBIG: Python ignores SIGXFSZ, so the write fails instead
        return "file_size_limit"
    if "BlockingIOError" in stderr or "Resource temporarily unavailable" in stderr:
        return "process_limit"
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


_SIGNAL_REASONS: dict[int, str] = {
    int(signal.SIGXCPU): "cpu_limit",
    int(signal.SIGXFSZ): "file_size_limit",
}
