"""A path given on the command line that names nothing is an error (exit 1) naming the path
and what to give instead, never an empty listing; an existing empty directory is fine."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app

runner = CliRunner()

MISSING = "no-such-dir"

WRONG = {
    "runs": ["runs", "--runs-dir", MISSING],
    "runs show": ["runs", "show", "some-run", "--runs-dir", MISSING],
    "plot": ["plot", "some-run", "--runs-dir", MISSING],
    "eval": ["eval", MISSING],
    "magrpo eval": ["magrpo", "eval", MISSING],
    "p2p play": ["p2p", "play", MISSING],
    "p2p resume": ["p2p", "resume", MISSING],
    "jobs list": ["jobs", "list", "--runs-dir", MISSING],
    "jobs status": ["jobs", "status", "job-1", "--runs-dir", MISSING],
    "jobs logs": ["jobs", "logs", "job-1", "--runs-dir", MISSING],
    "jobs cancel": ["jobs", "cancel", "job-1", "--runs-dir", MISSING],
}
"""Each command that takes a directory, given one that does not exist."""


@pytest.mark.parametrize("args", WRONG.values(), ids=WRONG.keys())
def test_a_missing_directory_is_an_error_naming_it_and_the_fix(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(build_app(), args)
    assert result.exit_code != 0, result.output
    message = str(result.exception)
    assert f"'{MISSING}' does not exist: give " in message, message
    assert result.output == ""  # nothing printed before the error, e.g. no progress display
    assert not (tmp_path / MISSING).exists()


def test_a_file_where_a_directory_belongs_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    result = runner.invoke(build_app(), ["runs", "--runs-dir", str(tmp_path / "notes.txt")])
    assert result.exit_code != 0 and "is not a directory" in str(result.exception)


def test_an_empty_directory_lists_nothing_and_succeeds(tmp_path: Path) -> None:
    for args, said in ((["runs"], "No runs in"), (["jobs", "list"], "No jobs in")):
        result = runner.invoke(build_app(), [*args, "--runs-dir", str(tmp_path)])
        assert result.exit_code == 0, result.output
        assert said in result.output and str(tmp_path) in " ".join(result.output.split())


def test_p2p_resume_of_a_directory_without_a_session_stops_before_starting(
    tmp_path: Path,
) -> None:
    result = runner.invoke(build_app(), ["p2p", "resume", str(tmp_path)])
    assert result.exit_code != 0 and "holds no session (no run.json)" in str(result.exception)
    assert result.output == ""


@pytest.mark.parametrize(
    "args",
    [["train", "{dir}/quickstrat.json"], ["magrpo", "train", "{dir}/quickstrat.json"],
     ["p2p", "run", "balance", "{dir}/quickstrat.json"]],
)  # fmt: skip
def test_a_missing_config_file_suggests_the_near_name(args: list[str], tmp_path: Path) -> None:
    """Issue 42, item 4: a typo in a config's file name gets the file beside it."""
    (tmp_path / "quickstart.json").write_text("{}")
    result = runner.invoke(build_app(), [a.format(dir=tmp_path) for a in args])
    assert result.exit_code != 0
    said = str(result.exception) + result.output
    assert f"Did you mean '{tmp_path / 'quickstart.json'}'?" in said, said


@pytest.mark.parametrize(
    "command", [["train"], ["magrpo", "train"], ["parl", "train"], ["p2p", "run", "x"]]
)
def test_every_training_command_takes_runs_dir(command: list[str]) -> None:
    """Issue 42, item 4: the docs say --runs-dir is everywhere; the training commands too."""
    result = runner.invoke(build_app(), [*command, "--help"], terminal_width=200)
    assert "--runs-dir" in result.output, result.output


def test_runs_dir_places_a_weight_space_run(tmp_path: Path) -> None:
    config = Path(__file__).resolve().parents[2] / "configs" / "magrpo" / "writing_tiny.json"
    result = runner.invoke(build_app(), ["magrpo", "train", str(config), "--dry-run",
                                         "--runs-dir", str(tmp_path / "elsewhere")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f'"runs_dir": "{tmp_path / "elsewhere"}"' in result.output
