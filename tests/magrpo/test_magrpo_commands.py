from typer.testing import CliRunner

from langmarl.cli import build_app


def test_dry_run_validates_and_prints_the_run():
    result = CliRunner().invoke(
        build_app(),
        [
            "magrpo",
            "train",
            "configs/magrpo/coding_tiny.json",
            "--dry-run",
            "--set",
            "trainer.max_steps=5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "magrpo on task coding" in result.output
    assert '"max_steps": 5' in result.output


def test_bad_override_names_the_fix():
    result = CliRunner().invoke(
        build_app(),
        [
            "magrpo",
            "train",
            "configs/magrpo/writing_tiny.json",
            "--dry-run",
            "--set",
            "trainer.num_generations=1",
        ],
    )
    assert result.exit_code != 0
    assert "num_generations >= 2" in str(result.exception) + result.output


def test_a_run_held_by_another_process_is_refused_before_anything_loads(tmp_path):
    import os

    from langmarl.core.errors import RunLockedError
    from langmarl.store import RunLock

    output = tmp_path / "run"
    with RunLock(output):
        result = CliRunner().invoke(
            build_app(),
            [
                "magrpo",
                "train",
                "configs/magrpo/writing_tiny.json",
                "--resume",
                "latest",
                "--set",
                f"trainer.output_dir={output}",
            ],
        )
    assert isinstance(result.exception, RunLockedError)
    assert f"in use by process {os.getpid()}" in str(result.exception)
    assert sorted(p.name for p in output.iterdir()) == [".lock"]
