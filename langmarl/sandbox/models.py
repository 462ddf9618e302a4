"""Limits and results of one sandboxed run."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SandboxLimits(BaseModel):
    """What sandboxed code may use. Every limit is enforced per run (see ``docs/text_envs.md``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(default=10.0, gt=0)
    """Wall-clock limit; on expiry the whole process group (and cgroup, if any) is killed."""
    memory_mb: int = Field(default=512, gt=0)
    """Memory in MiB: the address-space limit of each process (``RLIMIT_AS``) and, with a
    memory cgroup, the total of the whole process tree (the cgroup's limit is
    ``memory_mb + max_disk_mb``, as the sandbox's files live in RAM too)."""
    max_processes: int = Field(default=64, gt=0)
    """Process/thread limit of the whole tree (a pids cgroup; ``RLIMIT_NPROC`` too)."""
    max_output_bytes: int = Field(default=1_000_000, gt=0)
    """Bytes kept per stream (stdout, stderr); more kills the run with ``output_limit``."""
    allow_network: bool = False
    """Leave sockets and DNS usable (otherwise: a fresh network namespace with only a down
    loopback, seccomp refusing ``socket`` and a socket guard)."""
    extra_env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the minimal environment (nothing is inherited from the caller)."""
    allow_subprocess: bool = False
    """Let the code start other programs (``execve``); ``os.fork`` is always allowed."""
    allow_unix_sockets: bool = False
    """Let the code create Unix-domain sockets (``multiprocessing``'s forkserver needs them);
    ``socketpair`` is always allowed."""
    max_file_bytes: int = Field(default=64_000_000, gt=0)
    """Largest file the code may write (``RLIMIT_FSIZE``)."""
    max_disk_mb: int = Field(default=128, gt=0)
    """Total MiB of everything the code writes: its directory is a tmpfs of this size (and
    persisted directories get at most this much copied back to the real disk)."""


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
    """Why the run was stopped or failed for containment: ``timeout``, ``memory_limit``
    (``MemoryError`` under ``RLIMIT_AS``, or the kernel OOM-killed a process at the cgroup's
    total), ``process_limit``, ``cpu_limit``, ``file_size_limit``, ``disk_limit`` (the
    sandbox's tmpfs is full: ``ENOSPC``), ``output_limit``,
    ``network_blocked``, ``write_blocked``, ``subprocess_blocked``, ``secret_blocked``
    (the audit hook refused), ``fs_blocked`` (the program failed with ``EACCES`` under
    Landlock: the kernel refused a file access, e.g. one reached through ``dir_fd``) or
    ``signal SIGxxx``; ``None`` for an ordinary exit."""
    duration_s: float = 0.0
    landlock_abi: int = 0
    """Landlock ABI the run was confined with; 0 when the kernel offers none, and then only
    the audit hook guards the file system."""
    degraded: list[str] = Field(default_factory=list)
    """Optional layers that were missing, each ``"layer: why; what is lost"`` (empty when the
    run had every layer: namespaces, cgroup, Landlock, seccomp)."""
    memory_peak_mb: float | None = None
    """Peak total memory of the run's process tree (cgroup), in MiB; None without a cgroup."""
