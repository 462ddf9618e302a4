"""The run's cgroups on this machine's real hierarchy (root, cgroup v1), and where none can be."""

from __future__ import annotations

import os
from pathlib import Path

from langmarl.sandbox.cgroup import CGROUP_ROOT, SandboxCgroup


def test_creates_memory_and_pids_caps_and_removes_them() -> None:
    group, why = SandboxCgroup.create(300 * 1024 * 1024, 17)
    assert group is not None, f"no cgroup on this machine (root expected): {why}"
    try:
        if group.version == 1:
            limit = (group.memory_dir / "memory.limit_in_bytes").read_text()
        else:
            limit = (group.memory_dir / "memory.max").read_text()
        assert int(limit) == 300 * 1024 * 1024
        assert (group.pids_dir / "pids.max").read_text().strip() == "17"
        assert group.pids() == [] and group.oom_kills() == 0
        assert all(Path(f).parent.is_relative_to(CGROUP_ROOT) for f in group.procs_files)
    finally:
        group.kill_all_and_remove()
    assert not any(d.exists() for d in group.dirs)


def test_no_cgroup_hierarchy_is_a_reason_not_an_error(tmp_path: Path) -> None:
    group, why = SandboxCgroup.create(1 << 20, 8, root=tmp_path)
    assert group is None and why is not None and str(tmp_path) in why
    assert os.listdir(tmp_path) == []
