"""What the machine has free right now: cores, load, memory, disk, and GPUs where an NVIDIA
driver is present (``nvidia-smi``), read from ``/proc`` and the OS without extra packages.
The dashboard's resource monitor (``GET /api/resources/status``) serves it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

GPU_QUERY = "name,memory.used,memory.total,utilization.gpu"
GPU_TIMEOUT_S = 5.0


def _meminfo() -> dict[str, int]:
    """``/proc/meminfo`` in bytes (empty where it does not exist)."""
    try:
        lines = Path("/proc/meminfo").read_text(encoding="ascii").splitlines()
    except OSError:
        return {}
    found = {}
    for line in lines:
        name, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            found[name] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    return found


def gpus() -> list[dict[str, Any]]:
    """Each NVIDIA GPU's name, memory used/total (MiB) and utilization (%); ``[]`` without
    ``nvidia-smi`` or when it fails."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        done = subprocess.run(
            [smi, f"--query-gpu={GPU_QUERY}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=GPU_TIMEOUT_S, check=True,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    found = []
    for row in done.stdout.strip().splitlines():
        name, used, total, util = (part.strip() for part in row.split(","))
        memory = {"memory_used_mib": float(used), "memory_total_mib": float(total)}
        found.append({"name": name, **memory, "utilization_pct": float(util)})
    return found


def resource_status(disk_path: str | Path = ".") -> dict[str, Any]:
    """Cores (all and this process's), load averages, memory and ``disk_path``'s disk in
    bytes, and GPUs (:func:`gpus`)."""
    memory = _meminfo()
    existing = Path(disk_path).absolute()
    while not existing.exists():  # a runs directory not made yet: the disk it will be on
        existing = existing.parent
    disk = shutil.disk_usage(existing)
    return {
        "cpus": os.cpu_count() or 1,
        "cpus_usable": len(os.sched_getaffinity(0)),
        "load_average": list(os.getloadavg()),
        "memory": {"total": memory.get("MemTotal"), "available": memory.get("MemAvailable")},
        "disk": {"path": str(disk_path), "total": disk.total, "free": disk.free},
        "gpus": gpus(),
    }
