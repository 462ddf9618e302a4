import pytest
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
                f"runs_dir={output.parent}",
                "--set",
                f"run_id={output.name}",
            ],
        )
    assert isinstance(result.exception, RunLockedError)
    assert f"in use by process {os.getpid()}" in str(result.exception)
    assert sorted(p.name for p in output.iterdir()) == [".lock"]


@pytest.mark.slow
def test_a_failing_heldout_pass_after_training_leaves_the_run_failed(tmp_path, monkeypatch):
    """Real SmolLM2 agents, one step; the held-out pass after training breaks."""
    import langmarl.magrpo.heldout as heldout
    from langmarl.store.run import RunDir

    real = heldout.heldout_scores

    def broken_after(trainer, data, label):
        if label != "untrained":
            raise RuntimeError("disk vanished")
        return real(trainer, data, label)

    monkeypatch.setattr(heldout, "heldout_scores", broken_after)
    output = tmp_path / "run"
    settings = [f"runs_dir={tmp_path}", "run_id=run", "trainer.max_steps=1", "trainer.num_turns=1"]
    settings += ["trainer.max_new_tokens=4", "trainer.eval_interval=null", "task.num_eval=1"]
    args = ["magrpo", "train", "configs/magrpo/writing_tiny.json", "--no-plot"]
    result = CliRunner().invoke(build_app(), [*args, *(x for s in settings for x in ("--set", s))])
    assert isinstance(result.exception, RuntimeError), result.output
    record = RunDir(output).record()
    assert record.status == "failed" and "held-out evaluation after training" in (
        record.error or ""
    )
