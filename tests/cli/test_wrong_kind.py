"""A config or run of the wrong kind for a command gets one line naming the right command
(issue 27), before anything loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.store.run import RunDir

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _refused(*args: str) -> str:
    result = CliRunner().invoke(build_app(), list(args))
    assert result.exit_code != 0, result.output
    said = str(result.exception) + result.output
    assert "unknown key" not in said.lower() and len(str(result.exception).splitlines()) == 1
    return said


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["train", str(CONFIGS / "magrpo/quickstart.json")], "langmarl magrpo train"),
        (["train", str(CONFIGS / "parl/grpo_tiny.json")], "langmarl parl grpo"),
        (["magrpo", "train", str(CONFIGS / "quickstart.json")], "langmarl train"),
        (["magrpo", "train", str(CONFIGS / "p2p/smoke.yaml")], "langmarl p2p run"),
        (["p2p", "run", "balance", str(CONFIGS / "quickstart.json")], "langmarl train"),
        (["parl", "grpo", str(CONFIGS / "quickstart.json")], "langmarl train"),
        (
            ["p2p", "bench", str(CONFIGS / "p2p/cases.csv"), str(CONFIGS / "quickstart.json")],
            "langmarl train",
        ),
        (["parl", "train", str(CONFIGS / "magrpo/quickstart.json")], "langmarl magrpo train"),
        (
            ["jobs", "submit", "magrpo", str(CONFIGS / "quickstart.json")],
            "langmarl jobs submit language",
        ),
        (
            ["jobs", "submit", "language", str(CONFIGS / "p2p/smoke.yaml")],
            "langmarl jobs submit p2p",
        ),
    ],
)
def test_a_config_for_another_command_names_it(args: list[str], command: str) -> None:
    assert f"`{command} {args[-1]}`" in _refused(*args)


def test_eval_of_a_run_without_a_heldout_evaluation_says_what_to_look_at(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "grpo")
    run.start("parl_grpo")
    assert "langmarl parl curves" in _refused("eval", str(run.path))


def test_eval_of_a_weight_space_run_takes_no_split(tmp_path: Path) -> None:
    run = RunDir(tmp_path / "mag")
    run.start("magrpo")
    assert "drop --split" in _refused("eval", str(run.path), "--split", "train")


def test_eval_of_a_run_still_training_says_so_and_keeps_its_score(tmp_path: Path) -> None:
    """Issue 42, item 1: another process holds the run (as training does); ``eval`` says
    so in one line and writes nothing into the run."""
    import subprocess
    import sys

    run = RunDir(tmp_path / "live")
    run.start("language")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom langmarl.store.run import RunDir\n"
         "lock = RunDir(sys.argv[1]).lock().acquire()\nprint('held', flush=True)\n"
         "time.sleep(120)", str(run.path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        said = _refused("eval", str(run.path))
    finally:
        holder.kill()
        holder.wait()
    assert "is still training" in said and f"{holder.pid}" in said
    assert not (run.path / "evals").exists()


def test_an_unknown_key_names_the_near_one_or_five_nearest_never_the_whole_list() -> None:
    """Issue 42, item 4: a typo gets the key it meant; a key like none gets at most five."""

    def said(*args: str) -> str:
        result = CliRunner().invoke(build_app(), list(args))
        assert result.exit_code != 0, result.output
        return str(result.exception) + result.output

    typo = said("train", str(CONFIGS / "quickstart.json"), "--set", "num_iteration=1")
    assert "Did you mean 'num_iterations'?" in typo and "nearest" not in typo
    listed = said("p2p", "run", "balance", str(CONFIGS / "p2p/smoke.yaml"), "--set", "zzz=1")
    nearest = listed.split("valid keys: ")[1].splitlines()[0]
    assert len(nearest.split(", ")) == 5 and "of the 3" in listed  # LoopConfig: 30-odd keys


def test_usage_errors_are_one_error_line_like_every_other_error() -> None:
    """Issue 42, item 4: click's usage errors came in a boxed "Error" panel while langmarl's
    own errors are ``error: …`` lines; through the real console script both are one line."""
    import subprocess
    import sys

    command = [str(Path(sys.executable).parent / "langmarl")]  # the console script
    for args, expected in (
        (["train", "--bogus"], "error: No such option: --bogus (see 'langmarl train --help')"),
        (["trian"], "error: No such command 'trian'. Did you mean 'train'?"),
        (["train", str(CONFIGS / "nope.json")], "error: "),
    ):
        environment = {"COLUMNS": "80", "PATH": "/usr/bin:/bin"}
        done = subprocess.run(
            [*command, *args], capture_output=True, text=True, timeout=120, env=environment
        )
        assert done.returncode != 0 and done.stdout == "", done
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(expected), done.stderr


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["train", "quickstart.json", "--set", "num_iteration=1"],
         "- --set num_iteration: unknown key. Did you mean 'num_iterations'?"),
        (["train", "quickstart.json", "--set", "llm.temprature=0.3"],
         "- --set llm.temprature: unknown key. Did you mean 'temperature'?"),
        (["magrpo", "train", "magrpo/quickstart.json", "--set", "trainer.max_stepz=3"],
         "- --set trainer.max_stepz: unknown key. Did you mean 'max_steps'?"),
        (["p2p", "run", "balance", "p2p/smoke.yaml", "--set", "total_timestep=3"],
         "- --set total_timestep: unknown key. Did you mean 'total_timesteps'?"),
    ],
)  # fmt: skip
def test_a_set_typo_is_blamed_on_set_in_at_most_three_lines(args: list[str], line: str) -> None:
    """Issue 42, item 4: a typo in --set was blamed on the config file; a nested one (an LLM
    field, a trainer field) came as a "Value error" quoting the whole mapping."""
    args = [str(CONFIGS / a) if a.endswith((".json", ".yaml")) else a for a in args]
    result = CliRunner().invoke(build_app(), args)
    said = str(result.exception)
    assert result.exit_code != 0 and said.splitlines()[1:] == [line], said
    assert "(--set over " in said.splitlines()[0], said  # two lines: header (path) and the fix
