"""The sandbox run by an ordinary user: every layer but the cgroup, and it says so."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from langmarl.sandbox.confine import PACKAGE_DIR

DRIVER = r"""
import json, os, warnings
from langmarl.sandbox import SandboxLimits, run_python
warnings.simplefilter("ignore")
code = (
    "import os, socket\nprint(os.getuid())\n"
    "try:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 9))\n"
    "except OSError as exc:\n    print(type(exc).__name__)\n"
)
run = run_python(code)
disk = run_python("open('big', 'wb').write(b'x' * 20_000_000)", limits=SandboxLimits(max_disk_mb=8))
print(json.dumps({"uid": os.getuid(), "run": run.model_dump(), "disk": disk.killed_reason}))
"""


def _as_nobody_command(driver: Path, scratch: Path) -> list[str]:
    """Run ``driver`` as uid 65534 (we are root): in a private mount namespace, directories
    on the way to Python and langmarl that others may not traverse (``/root``) are covered
    by a 0755 tmpfs with just the needed subtree bound back."""
    lines = ["set -e"]
    needed = [Path(sys.base_prefix), Path(sys.prefix), PACKAGE_DIR]
    for index, path in enumerate(needed):
        for ancestor in path.resolve().parents:
            if ancestor != Path("/") and not ancestor.stat().st_mode & stat.S_IXOTH:
                child = path.resolve().relative_to(ancestor).parts[0]
                keep = scratch / f"keep-{index}"
                lines += [
                    f"mkdir -p {keep} && mount --bind {ancestor / child} {keep}",
                    f"mountpoint -q {ancestor} || mount -t tmpfs -o mode=0755 tmpfs {ancestor}",
                    f"mkdir -p {ancestor / child} && mount --bind {keep} {ancestor / child}",
                ]
    lines.append(
        "cd /tmp && exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "
        f"--bounding-set=-all {sys.executable} {driver}"
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(lines)]


def test_an_ordinary_user_gets_every_layer_but_the_cgroup() -> None:
    with tempfile.TemporaryDirectory() as directory:  # pytest's tmp_path is root-only
        Path(directory).chmod(0o755)
        driver = Path(directory) / "driver.py"
        driver.write_text(DRIVER)
        driver.chmod(0o644)
        root = os.geteuid() == 0
        command = (
            _as_nobody_command(driver, Path(directory)) if root else [sys.executable, str(driver)]
        )
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    run = report["run"]
    assert report["uid"] != 0
    assert run["ok"], run["stderr"]
    assert run["stdout"].split() == [str(report["uid"]), "PermissionError"]
    assert run["landlock_abi"] >= 1
    # No cgroup for an ordinary user (unless a delegated v2 subtree allows one): said so.
    assert all(note.startswith("cgroup: ") for note in run["degraded"]), run["degraded"]
    assert report["disk"] == "disk_limit"  # the tmpfs cap needs no privilege
