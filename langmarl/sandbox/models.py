"""Limits and results of one sandboxed run."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SandboxLimits(BaseModel):
    """What sandboxed code may use. Every limit is enforced per run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=10.0, gt=0)
    """Wall-clock limit; on expiry the whole process group (and cgroup, if any) is killed."""
    memory_mb: int = Field(default=512, gt=0)
    """Address-space limit per process (``RLIMIT_AS``), in MiB."""
    max_processes: int = Field(default=64, gt=0)
    """Process/thread limit (``RLIMIT_NPROC``; a pids cgroup too when running as root)."""
    max_output_bytes: int = Field(default=1_000_000, gt=0)
    """Bytes kept per stream (stdout, stderr); more kills the run with ``output_limit``."""
    allow_network: bool = False
    """Leave sockets and DNS usable (otherwise: a fresh network namespace plus a socket guard)."""
    extra_env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the minimal environment (nothing is inherited from the caller)."""
    allow_subprocess: bool = False
    """Let the code start other programs (exec/``subprocess``); ``os.fork`` is always allowed."""
    max_file_bytes: int = Field(default=64_000_000, gt=0)
    """Largest file the code may write (``RLIMIT_FSIZE``)."""


class SandboxResult(BaseModel):
    """The outcome of one run. A failing program is a result, not an exception."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    """Exit code 0 and no limit hit."""
    returncode: int | None
    """The exit code; negative for a signal; ``None`` if it never exited on its own."""
    stdout: str
    stderr: str
    timed_out: bool = False
    killed_reason: str | None = None
    """Why the run was stopped or failed for containment: ``timeout``, ``memory_limit``,
    ``process_limit``, ``cpu_limit``, ``file_size_limit``, ``output_limit``,
    ``network_blocked``, ``write_blocked``, ``subprocess_blocked``, ``secret_blocked``
    (the audit hook refused), ``fs_blocked`` (the program failed with ``EACCES`` under
    Landlock: the kernel refused a file access, e.g. one reached through ``dir_fd``) or
    ``signal SIGxxx``; ``None`` for an ordinary exit."""
    duration_s: float = 0.0
    landlock_abi: int = 0
    """Landlock ABI the run was confined with; 0 when the kernel offers none, and then only
    the audit hook guards the file system."""
