"""Run untrusted Python in a contained subprocess.

Each run gets a fresh temporary directory as its working directory (and HOME and TMPDIR) and
starts through the one confinement every sandboxed process in langmarl shares
(``confine.py``): a minimal environment (nothing inherited: no API keys), a new session whose
whole process group and cgroup are killed on timeout and after exit, user/mount/network
namespaces, a size-capped tmpfs as its directory, rlimits, a cgroup capping the memory and
processes of the whole tree, Landlock, seccomp and an audit hook. See ``docs/text_envs.md``
for what is and is not prevented.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
import warnings
from pathlib import Path, PurePosixPath
from typing import IO

from langmarl.core.aio import threaded
from langmarl.core.errors import SandboxError
from langmarl.core.scratch import scratch
from langmarl.sandbox.confine import ConfinedProcess, Confinement, Outcome, Target
from langmarl.sandbox.models import SandboxLimits, SandboxResult

SCRIPT_NAME = "main.py"
_DEFAULT_LIMITS = SandboxLimits()
_GUARD_REASONS = (
    "network_blocked",
    "write_blocked",
    "subprocess_blocked",
    "secret_blocked",
    "disk_limit",
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
        limits: Time, memory, disk, process, output and network limits.
        files: Extra files to create first, relative path → text (importable from ``code``).
        stdin: Text fed to the program's standard input (none: it reads EOF).
        args: Command-line arguments (``sys.argv[1:]``).

    Returns:
        The result; a failing or killed program is a result, not an exception.

    Raises:
        SandboxError: if a file path escapes the sandbox dir, the interpreter cannot start,
            or a required confinement layer (the namespaces) is unavailable.
    """
    with scratch("langmarl-sandbox-") as workdir:  # a killed caller's is swept by the next
        _write_files(workdir, code, files or {})
        confinement = Confinement(workdir=workdir, limits=limits)
        return _run(confinement, stdin, args or [])


run_python_async = threaded(run_python)


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


def _run(confinement: Confinement, stdin: str | None, args: list[str]) -> SandboxResult:
    limits = confinement.limits
    start = time.monotonic()
    process = ConfinedProcess.start(
        Target(kind="script", name=SCRIPT_NAME, args=tuple(args)),
        confinement,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
    )
    overflow = threading.Event()
    proc = process.popen
    assert proc.stdout is not None and proc.stderr is not None  # PIPE was requested
    out = _Capture(proc.stdout, limits.max_output_bytes, overflow)
    err = _Capture(proc.stderr, limits.max_output_bytes, overflow)
    if stdin is not None:
        threading.Thread(target=_feed, args=(proc, stdin), daemon=True).start()
    timed_out = _wait(process, limits.timeout_s, overflow)
    outcome = process.finish()
    if outcome.degraded:
        warnings.warn(
            "the sandbox ran without some of its layers: "
            + "; ".join(outcome.degraded)
            + " (see docs/text_envs.md)",
            RuntimeWarning,
            stacklevel=3,
        )
    stdout, stderr = out.text(), err.text()
    overflowed = out.overflowed or err.overflowed
    reason = _killed_reason(outcome, stderr, timed_out, overflowed)
    if timed_out:
        stderr += f"\n[sandbox] killed after the {limits.timeout_s}s timeout (whole process group)"
    if outcome.memory_exceeded:
        stderr += "\n[sandbox] killed: the process tree reached its total memory limit"
    return SandboxResult(
        ok=outcome.returncode == 0 and reason is None,
        returncode=None if timed_out else outcome.returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        killed_reason=reason,
        duration_s=time.monotonic() - start,
        landlock_abi=outcome.landlock_abi,
        degraded=outcome.degraded,
        memory_peak_mb=outcome.memory_peak_mb,
    )


def _feed(proc: subprocess.Popen[bytes], text: str) -> None:
    assert proc.stdin is not None  # PIPE was requested
    try:
        proc.stdin.write(text.encode("utf-8"))
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass  # the program exited without reading all of it


def _wait(process: ConfinedProcess, timeout_s: float, overflow: threading.Event) -> bool:
    """Wait for exit, an output overflow, an OOM kill or the timeout; True if the timeout hit."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            process.popen.wait(timeout=min(0.05, max(deadline - time.monotonic(), 0.0)))
            return False
        except subprocess.TimeoutExpired:
            if overflow.is_set() or process.poll() is not None or process.memory_exceeded:
                return False
            if time.monotonic() >= deadline:
                return True


def _killed_reason(outcome: Outcome, stderr: str, timed_out: bool, overflowed: bool) -> str | None:
    returncode = outcome.returncode
    if outcome.memory_exceeded:
        return "memory_limit"
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
    if outcome.landlock_abi and "[Errno 13]" in stderr:
        return "fs_blocked"  # Landlock refused a file (or TCP) access the audit hook let through
    if "MemoryError" in stderr:
        return "memory_limit"
    if "[Errno 27]" in stderr:  # EFBIG: Python ignores SIGXFSZ, so the write fails instead
        return "file_size_limit"
    if "[Errno 28]" in stderr:  # ENOSPC: the sandbox's tmpfs is full
        return "disk_limit"
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
