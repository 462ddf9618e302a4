"""A run file that is corrupt, missing, empty or not UTF-8 gives one clear message naming
the file and the fix; following the fix resumes the run. Refused writes (disk full,
read-only) leave the run resumable with its status true."""

import errno
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from trainer_fakes import QA_STUB_REPLY
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.errors import RunFileError, StorageError
from langmarl.testing.openai_stub import OpenAIStub

TRUNCATED = b'{"iteration": 1, "agent_ids": ["resea'


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(responder=QA_STUB_REPLY) as server:
        yield server


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, stub: OpenAIStub) -> Path:
    """A run with one finished iteration, and its config."""
    base = tmp_path_factory.mktemp("finished")
    _write_config(base, stub)
    result = CliRunner().invoke(build_app(), ["train", str(base / "c.json")])
    assert result.exit_code == 0, result.output
    return base


def _write_config(base: Path, stub: OpenAIStub) -> None:
    config = {
        "env": "language",
        "exp_name": "r",
        "num_iterations": 1,
        "trajectories_per_iteration": 2,
        "validation_size": 2,
        "llm": stub.llm_config(),
        "seed": 0,
        "runs_dir": str(base / "runs"),
        "checkpoint_dir": str(base / "ck"),
    }
    (base / "c.json").write_text(json.dumps(config))


def _copy(finished: Path, tmp_path: Path, stub: OpenAIStub) -> Path:
    shutil.copytree(finished / "runs", tmp_path / "runs")
    _write_config(tmp_path, stub)
    return tmp_path / "runs" / "r"


def _resume(base: Path) -> object:
    args = ["train", str(base / "c.json"), "--set", "num_iterations=2"]
    return CliRunner().invoke(build_app(), args)


CASES = {
    "run.json": (TRUNCATED, "not valid JSON", "Delete run.json to resume"),
    "config.json": (b"", "empty", "written again from the config"),
    "policies/iter_0001/manifest.json": (TRUNCATED, "line 1, column", "Delete the folder"),
    "policies/iter_0001/researcher.txt": (b"  \n", "is empty", "Restore it, or delete the"),
    "policies/iter_0001/answerer.txt": (b"\xff\xfeA policy", "not UTF-8", "Delete the folder"),
    "trajectories/iter_0001/ep_0000.json": (TRUNCATED, "not valid JSON", "generated again"),
}


@pytest.mark.parametrize("relpath", list(CASES))
def test_an_unreadable_run_file_is_named_and_the_fix_resumes_the_run(
    tmp_path: Path, finished: Path, stub: OpenAIStub, relpath: str
) -> None:
    run = _copy(finished, tmp_path, stub)
    content, problem, fix = CASES[relpath]
    (run / relpath).parent.mkdir(parents=True, exist_ok=True)
    (run / relpath).write_bytes(content)
    result = _resume(tmp_path)
    assert isinstance(result.exception, RunFileError), result.output
    message = str(result.exception)
    assert message.startswith(str(run / relpath)) and problem in message and fix in message
    assert "\n" not in message
    if relpath != "run.json":  # the status is recorded where run.json is readable
        info = json.loads((run / "run.json").read_text())
        assert info["status"] == "failed" and relpath.split("/")[-1] in info["error"]
    target = run / relpath
    if "Delete the folder" in message or "delete the folder" in message:
        shutil.rmtree(target.parent)
    else:
        target.unlink()
    result = _resume(tmp_path)
    assert result.exit_code == 0, result.output
    assert json.loads((run / "run.json").read_text())["completed_iterations"] == 2


def test_a_missing_policy_file_is_named(tmp_path: Path, finished: Path, stub: OpenAIStub) -> None:
    run = _copy(finished, tmp_path, stub)
    (run / "policies/iter_0001/answerer.txt").unlink()
    result = _resume(tmp_path)
    assert isinstance(result.exception, RunFileError)
    assert "the policy of 'answerer' is missing" in str(result.exception)


def test_the_command_prints_one_line_not_a_traceback(
    tmp_path: Path, finished: Path, stub: OpenAIStub
) -> None:
    run = _copy(finished, tmp_path, stub)
    (run / "policies/iter_0001/manifest.json").write_bytes(TRUNCATED)
    command = [sys.executable, "-m", "langmarl.cli", "train", str(tmp_path / "c.json")]
    result = subprocess.run(
        [*command, "--set", "num_iterations=2"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "manifest.json" in " ".join(result.stderr.split())


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_refused_write_mid_run_leaves_it_resumable(
    tmp_path: Path,
    finished: Path,
    stub: OpenAIStub,
    monkeypatch: pytest.MonkeyPatch,
    code: int,
) -> None:
    run = _copy(finished, tmp_path, stub)
    real_replace = os.replace

    def refuse_checkpoints(src: str, dst: str) -> None:
        if "policies" in str(dst) or "run.json" in str(dst):
            raise OSError(code, os.strerror(code))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", refuse_checkpoints)
    result = _resume(tmp_path)
    assert isinstance(result.exception, StorageError), result.output
    assert "run the same command again" in str(result.exception)
    monkeypatch.setattr(os, "replace", real_replace)
    assert not list(run.rglob(".*.tmp"))  # no temp file left behind
    result = _resume(tmp_path)
    assert result.exit_code == 0, result.output
    assert json.loads((run / "run.json").read_text())["completed_iterations"] == 2


_FULL_THEN_READ_ONLY = """
set -u
mount -t tmpfs -o size=4m tmpfs "$MNT"
cp -r "$BASE/runs/r" "$MNT/r"
dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null
train() { python -m langmarl.cli train "$BASE/c.json" --set runs_dir="$MNT" "$@"; }
train --set num_iterations=2 > "$BASE/full.out" 2>&1; echo $? > "$BASE/full.code"
rm "$MNT/filler"
mount -o remount,ro "$MNT"
train --set num_iterations=2 > "$BASE/ro.out" 2>&1; echo $? > "$BASE/ro.code"
mount -o remount,rw "$MNT"
train --set num_iterations=2 > "$BASE/ok.out" 2>&1; echo $? > "$BASE/ok.code"
cp "$MNT/r/run.json" "$BASE/final.json"
"""


def test_a_full_then_read_only_disk_gives_one_line_and_the_run_resumes(
    tmp_path: Path, finished: Path, stub: OpenAIStub
) -> None:
    """On a real tmpfs in a private mount namespace: full, then read-only, then writable."""
    shutil.copytree(finished / "runs", tmp_path / "runs")
    _write_config(tmp_path, stub)
    (tmp_path / "mnt").mkdir()
    env = {**os.environ, "BASE": str(tmp_path), "MNT": str(tmp_path / "mnt")}
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _FULL_THEN_READ_ONLY],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for case, problem in (("full", "no space left on the device"), ("ro", "read-only")):
        output = " ".join((tmp_path / f"{case}.out").read_text().split())
        assert (tmp_path / f"{case}.code").read_text().strip() == "1", output
        assert "Traceback" not in output and output.count("error:") == 1
        assert f"cannot write {tmp_path / 'mnt' / 'r'}" in output and problem in output
    ok = (tmp_path / "ok.out").read_text()
    assert (tmp_path / "ok.code").read_text().strip() == "0", ok
    final = json.loads((tmp_path / "final.json").read_text())
    assert final["status"] == "completed" and final["completed_iterations"] == 2
