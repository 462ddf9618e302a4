"""The contract every job backend keeps (local processes, a Ray cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from langmarl.core.errors import ConfigError
from langmarl.jobs.records import JobRecord
from langmarl.jobs.spec import JobSpec


@runtime_checkable
class Backend(Protocol):
    """Runs jobs and tells what became of them.

    Every job's run lands in ``<runs_dir>/<job_id>`` and its record in
    ``<runs_dir>/.jobs/<job_id>.json``, whichever backend ran it, so another process (``langmarl
    jobs list``, the web API) sees the same jobs.
    """

    def submit(self, spec: JobSpec) -> str:
        """Validate ``spec`` (ConfigError naming the field and the fix, before anything runs),
        queue it and return its job id; the job starts as soon as its resources are free."""
        ...

    def status(self, job_id: str) -> JobRecord:
        """The job's record with a true state: queued, running, completed, failed or
        cancelled, its run directory, exit code and error (ConfigError: no such job)."""
        ...

    def cancel(self, job_id: str) -> JobRecord:
        """Stop the job gracefully: a queued job never starts; a running one gets SIGTERM
        (its run ends ``cancelled``, files intact), then SIGKILL after a grace period.
        Returns at once; :meth:`wait` for the end. Cancelling a finished job changes
        nothing."""
        ...

    def logs(self, job_id: str, tail: int | None = None) -> str:
        """The command's stdout and stderr so far (the last ``tail`` lines)."""
        ...

    def list(self) -> list[JobRecord]:
        """Every job of the runs directory, newest first, states made true."""
        ...

    def wait(self, job_id: str, timeout_s: float | None = None) -> JobRecord:
        """Block until the job is completed, failed or cancelled (TimeoutError after
        ``timeout_s``) and return its record."""
        ...


BACKENDS: dict[str, str] = {
    "local": "langmarl.jobs.local:LocalBackend",
    "ray": "langmarl.jobs.ray_backend:RayBackend",
}
"""Backend name → ``"module:class"`` (Ray is imported only when asked for)."""


def open_backend(name: str, runs_dir: str | Path, address: str | None = None) -> Backend:
    """The backend called ``name`` over ``runs_dir`` (``address``: Ray's, ignored locally).

    Raises:
        ConfigError: for an unknown name (with a suggestion) or an address given to the
            local backend.
    """
    import importlib

    from langmarl.core.validation import did_you_mean

    if name not in BACKENDS:
        raise ConfigError(f"unknown backend {name!r}.{did_you_mean(name, BACKENDS)} "
                          f"Use one of {', '.join(BACKENDS)}")  # fmt: skip
    module, _, attr = BACKENDS[name].partition(":")
    cls = getattr(importlib.import_module(module), attr)
    if name == "local":
        if address is not None:
            raise ConfigError(f"--address {address!r} is for the ray backend: add --backend ray")
        return cls(runs_dir)
    return cls(runs_dir, address=address)
