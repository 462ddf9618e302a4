"""The Landlock wrapper: struct layout per ABI, and real confinement in a child process."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.sandbox import landlock


def test_landlock_is_active_on_this_machine() -> None:
    assert landlock.abi_version() >= 1


@pytest.mark.parametrize(
    ("abi", "size", "fs"),
    [(1, 8, 0x1FFF), (2, 8, 0x3FFF), (3, 8, 0x7FFF), (4, 16, 0x7FFF), (5, 16, 0xFFFF),
     (6, 24, 0xFFFF), (7, 24, 0xFFFF)],
)  # fmt: skip
def test_ruleset_attr_has_the_size_and_rights_the_abi_knows(abi: int, size: int, fs: int) -> None:
    attr = landlock.ruleset_attr(abi, allow_network=False)
    assert len(attr) == size
    fields = struct.unpack(f"={size // 8}Q", attr)
    assert fields[0] == fs == landlock.handled_fs_rights(abi)
    if abi >= 4:
        assert fields[1] == 0b11  # TCP bind and connect are handled, so refused
        assert struct.unpack("=QQ", landlock.ruleset_attr(abi, allow_network=True)[:16])[1] == 0
    if abi >= 6:
        assert fields[2] == 0b11  # abstract Unix sockets and signals are scoped


_CHILD = """
import json, os, sys
sys.path.insert(0, {root!r})
from langmarl.sandbox import landlock
inside, outside, lone_file = sys.argv[1:4]
abi = landlock.confine(
    read=[lone_file, "/no/such/path"], write=[inside, "/dev/null"],
    execute=[sys.base_prefix, sys.prefix, "/usr", "/lib", "/lib64"],
)
def attempt(action):
    try:
        return repr(action())
    except OSError as exc:
        return f"errno {{exc.errno}}"
report = {{
    "abi": abi,
    "write_inside": attempt(lambda: open(os.path.join(inside, "a"), "w").write("x")),
    "read_lone_file": attempt(lambda: open(lone_file).read()),
    "write_lone_file": attempt(lambda: open(lone_file, "a").write("x")),
    "read_outside": attempt(lambda: os.listdir(outside)),
    "write_outside": attempt(lambda: open(os.path.join(outside, "b"), "w").write("x")),
}}
print(json.dumps(report))
"""


def test_confine_allows_only_the_listed_paths(tmp_path: Path) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    lone_file = outside / "readable.txt"
    lone_file.write_text("hello")
    root = str(Path(landlock.__file__).parents[2])
    code = _CHILD.format(root=root)
    done = subprocess.run(
        [sys.executable, "-c", code, str(inside), str(outside), str(lone_file)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {
        "abi": landlock.abi_version(),
        "write_inside": "1",
        "read_lone_file": "'hello'",
        "write_lone_file": "errno 13",
        "read_outside": "errno 13",
        "write_outside": "errno 13",
    }
    assert (inside / "a").read_text() == "x" and not (outside / "b").exists()
    assert lone_file.read_text() == "hello"


def test_the_command_line_confines_then_runs_the_command(tmp_path: Path) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    program = (
        "import sys\n"
        "open(sys.argv[1] + '/a', 'w').write('x')\n"
        "try:\n    open(sys.argv[2] + '/b', 'w').write('x')\nexcept PermissionError:\n"
        "    print('refused')\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", landlock.__file__, "--python", "--write", str(inside), "--",
         sys.executable, "-c", program, str(inside), str(outside)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "refused\n"
    assert (inside / "a").exists() and not (outside / "b").exists()


def test_the_command_line_needs_a_command() -> None:
    done = subprocess.run(
        [sys.executable, "-I", landlock.__file__, "--python"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "give the command" in done.stderr
