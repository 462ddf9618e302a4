"""The cgroups of one sandboxed run: a cap on the total memory and processes of its whole tree.

``RLIMIT_AS`` and ``RLIMIT_NPROC`` are per process (and ``RLIMIT_NPROC`` is not enforced for
root): eight forked children under a 512 MiB ``RLIMIT_AS`` hold 4 GiB together, and
children that ``setsid`` leave the process group. A memory cgroup caps the sum (the kernel
OOM-kills inside the group at the limit, and the run is then stopped with
``memory_limit``), a pids cgroup caps the process count, and every member is killed at the
end, wherever it moved.

Both cgroup versions are handled: v1 (separate ``memory`` and ``pids`` hierarchies, each
child made under the caller's own cgroup there) and v2 (one child with ``memory.max``,
``memory.swap.max`` and ``pids.max``, under the caller's cgroup or else the root). Creating
them needs write access to the hierarchy (root, or a delegated v2 subtree); where that is
impossible :meth:`SandboxCgroup.create` says why and the run goes on with the rlimits only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")


@dataclass
class SandboxCgroup:
    """The cgroup directories of one run (one for v2; a memory and a pids one for v1)."""

    version: int
    memory_dir: Path
    pids_dir: Path
    dirs: list[Path] = field(default_factory=list)

    @property
    def procs_files(self) -> list[str]:
        """The files a process writes its pid to in order to join."""
        return [str(d / "cgroup.procs") for d in self.dirs]

    @classmethod
    def create(
        cls, memory_bytes: int, max_pids: int, *, root: Path = CGROUP_ROOT
    ) -> tuple[SandboxCgroup | None, str | None]:
        """Make the run's cgroups; returns ``(cgroup, None)`` or ``(None, why not)``."""
        name = f"langmarl-sandbox-{uuid.uuid4().hex[:12]}"
        own = _own_paths()
        try:
            if (root / "memory" / "memory.limit_in_bytes").exists():
                return cls._create_v1(root, own, name, memory_bytes, max_pids), None
            if (root / "cgroup.controllers").exists():
                return cls._create_v2(root, own.get("", "/"), name, memory_bytes, max_pids), None
        except OSError as exc:
            return None, f"cgroup: cannot create one ({exc})"
        return None, f"cgroup: no cgroup v1 memory controller or cgroup v2 under {root}"

    @classmethod
    def _create_v1(
        cls, root: Path, own: dict[str, str], name: str, memory_bytes: int, max_pids: int
    ) -> SandboxCgroup:
        memory = root / "memory" / own.get("memory", "/").lstrip("/") / name
        pids = root / "pids" / own.get("pids", "/").lstrip("/") / name
        memory.mkdir()
        group = cls(1, memory, pids, [memory])
        try:
            (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # no swapping past it
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
            pids.mkdir()
            group.dirs.append(pids)
            (pids / "pids.max").write_text(str(max_pids))
        except OSError:
            group.kill_all_and_remove()
            raise
        return group

    @classmethod
    def _create_v2(
        cls, root: Path, own: str, name: str, memory_bytes: int, max_pids: int
    ) -> SandboxCgroup:
        errors = []
        for parent in dict.fromkeys([root / own.lstrip("/"), root]):
            path = parent / name
            try:
                path.mkdir()
            except OSError as exc:
                errors.append(f"{parent}: {exc}")
                continue
            group = cls(2, path, path, [path])
            try:
                if not (path / "memory.max").exists() or not (path / "pids.max").exists():
                    (parent / "cgroup.subtree_control").write_text("+memory +pids")
                (path / "memory.max").write_text(str(memory_bytes))
                if (path / "memory.swap.max").exists():
                    (path / "memory.swap.max").write_text("0")
                (path / "pids.max").write_text(str(max_pids))
                return group
            except OSError as exc:
                errors.append(f"{parent}: {exc}")
                group.kill_all_and_remove()
        raise OSError(f"no cgroup v2 parent with the memory and pids controllers: {errors}")

    def pids(self) -> list[int]:
        """Members now."""
        members: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                members.update(int(p) for p in Path(procs).read_text().split())
        return sorted(members)

    def oom_kills(self) -> int:
        """How many processes the kernel killed for exceeding the memory limit."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        try:
            text = (self.memory_dir / name).read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def memory_peak(self) -> int | None:
        """The highest total memory of the run so far, in bytes (None if the kernel hides it)."""
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        try:
            return int((self.memory_dir / name).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def kill_all(self) -> None:
        """SIGKILL every member (``cgroup.kill`` on v2 when the kernel has it)."""
        if self.version == 2 and (self.memory_dir / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (self.memory_dir / "cgroup.kill").write_text("1")
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def kill_all_and_remove(self) -> None:
        """Kill every member until none is left, then delete the cgroups."""
        deadline = time.monotonic() + 5.0
        while self.pids() and time.monotonic() < deadline:
            self.kill_all()
            time.sleep(0.01)
        for path in self.dirs:
            _remove(path)


def _own_paths() -> dict[str, str]:
    """This process's cgroup path per controller (v1) and under ``""`` (v2)."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def _remove(path: Path) -> None:
    for _ in range(100):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)  # members that were just killed are still being reaped
    logger.warning("could not remove sandbox cgroup %s; remove it by hand", path)
