"""`langmarl runs export` and `langmarl runs compare` (issue 42, item 6)."""

from __future__ import annotations

import csv
import io
import json
import tarfile
import zipfile
from pathlib import Path

from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.store.compare import compare_runs
from langmarl.store.export import export_run
from langmarl.store.run import RunDir


def _run(root: Path, run_id: str, lr: float, rewards: list[float], **extra: object) -> Path:
    run = RunDir(root / run_id)
    config = {"run_id": run_id, "trainer": {"learning_rate": lr, "num_generations": 4}, **extra}
    run.start("magrpo", config=config, total_steps=len(rewards))
    for step, reward in enumerate(rewards, start=1):
        run.log_metrics(step, reward_mean=reward, loss=1.0 / step, note={"texts": ["a,b", "c"]})
    run.finish("completed")
    (run.path / "checkpoints" / "step-1").mkdir(parents=True)
    (run.path / "checkpoints" / "step-1" / "model.safetensors").write_bytes(b"weights")
    (run.path / "heldout.json").write_text('{"after": {"returns": [1.0]}}')
    return run.path


def test_metrics_export_as_csv_and_jsonl_keep_every_key(tmp_path: Path) -> None:
    run = _run(tmp_path, "a", 1e-5, [0.1, 0.4])
    assert export_run(run, tmp_path / "m.csv") == 2
    rows = list(csv.DictReader(io.StringIO((tmp_path / "m.csv").read_text())))
    assert list(rows[0]) == ["step", "loss", "note", "reward_mean"]
    assert [r["reward_mean"] for r in rows] == ["0.1", "0.4"]
    assert json.loads(rows[1]["note"]) == {"texts": ["a,b", "c"]}  # nested: JSON in its cell
    export_run(run, tmp_path / "m.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert lines == RunDir(run).metrics()


def test_archives_leave_out_the_lock_links_and_checkpoints_unless_asked(tmp_path: Path) -> None:
    run = _run(tmp_path, "a", 1e-5, [0.1])
    (run / ".lock").write_text("1")
    (tmp_path / "secret.txt").write_text("outside")
    (run / "outside").symlink_to(tmp_path / "secret.txt")
    export_run(run, tmp_path / "a.tar.gz")
    with tarfile.open(tmp_path / "a.tar.gz") as archive:
        names = set(archive.getnames())
    assert {"a/run.json", "a/metrics.jsonl", "a/heldout.json"} <= names
    assert not {n for n in names if "checkpoints" in n or n.endswith((".lock", "outside"))}
    export_run(run, tmp_path / "a.zip", checkpoints=True)
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        assert "a/checkpoints/step-1/model.safetensors" in archive.namelist()
        assert archive.read("a/checkpoints/step-1/model.safetensors") == b"weights"


def test_compare_shows_only_the_settings_that_differ_and_shared_series(tmp_path: Path) -> None:
    first = _run(tmp_path, "a", 1e-5, [0.1, 0.4, 0.3])
    second = _run(tmp_path, "b", 3e-5, [0.2, 0.6], seed=7)
    found = compare_runs([first, second])
    assert [r.run_id for r in found.runs] == ["a", "b"]
    assert found.config_diff == {"trainer.learning_rate": ["1e-05", "3e-05"], "seed": ["—", "7"]}
    reward = found.series["reward_mean"]
    assert (reward[0].last, reward[0].high, reward[0].points) == (0.3, 0.4, 3)
    assert (reward[1].last, reward[1].low) == (0.6, 0.2)
    assert "note" not in found.series  # not a number


def test_the_commands_render_at_80_columns_and_refuse_bad_input(tmp_path: Path) -> None:
    _run(tmp_path, "alpha-run", 1e-5, [0.1, 0.4])
    _run(tmp_path, "beta-run", 3e-5, [0.2, 0.6])
    runner, app = CliRunner(), build_app()
    roots = ["--runs-dir", str(tmp_path)]
    shown = runner.invoke(app, ["runs", "compare", "alpha-run", "beta-run", *roots],
                          env={"COLUMNS": "80"})  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "trainer.learning_rate" in shown.output and "3e-05" in shown.output
    assert "0.6 (0.2 … 0.6)" in shown.output
    assert max(len(line) for line in shown.output.splitlines()) <= 80
    as_json = runner.invoke(app, ["runs", "compare", "alpha-run", "beta-run", *roots, "--json"])
    assert json.loads(as_json.output)["config_diff"]["trainer.learning_rate"][1] == "3e-05"
    one = runner.invoke(app, ["runs", "compare", "alpha-run", *roots])
    assert one.exit_code != 0 and "two or more runs" in str(one.exception)
    out = tmp_path / "out" / "alpha.csv"
    done = runner.invoke(app, ["runs", "export", "alpha-run", str(out), *roots])
    assert done.exit_code == 0 and "2 metrics lines" in done.output and out.is_file()
    wrong = runner.invoke(app, ["runs", "export", "alpha-run", str(tmp_path / "m.xlsx"), *roots])
    assert wrong.exit_code != 0 and ".csv" in str(wrong.exception)
    assert not (tmp_path / "m.xlsx").exists()
