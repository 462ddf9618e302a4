"""`langmarl plot RUN`: writes the PNG, prints its path; run ids; clear errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.files import append_jsonl, atomic_write_json
from langmarl.store import LocalStore

runner = CliRunner()


def _weight_run(run_dir: Path) -> Path:
    atomic_write_json(run_dir / "config.json", {"algorithm": "maac"})
    for step in (1, 2, 3):
        append_jsonl(run_dir / "metrics.jsonl", {"step": step, "reward_mean": step / 10})
    return run_dir


def test_plot_a_run_directory_prints_the_png_path(tmp_path: Path) -> None:
    run = _weight_run(tmp_path / "maac")
    result = runner.invoke(build_app(), ["plot", str(run)])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == str(run / "curves.png")
    assert (run / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_plot_a_run_id_under_dir_to_an_output_file(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "exp")
    store.start_run("quick")
    store.save_metrics("quick", [{"iteration": 0, "avg_reward": 0.2}])
    out = tmp_path / "figs" / "quick.png"
    result = runner.invoke(
        build_app(), ["plot", "quick", "--runs-dir", str(tmp_path / "exp"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == str(out) and out.is_file()


def test_not_a_run_is_one_clear_line_and_exit_1(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("x")
    result = subprocess.run(
        [sys.executable, "-m", "langmarl.cli", "plot", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    message = " ".join(result.stderr.split())  # rich wraps lines at the terminal width
    assert message.startswith("error: ") and "Traceback" not in message
    assert "is not a run directory langmarl can plot (it holds: readme.txt)" in message
    assert "language: run.json + metrics.json" in message


def test_unknown_run_id_names_where_it_looked(tmp_path: Path) -> None:
    result = runner.invoke(build_app(), ["plot", "nope", "--runs-dir", str(tmp_path)])
    assert result.exit_code != 0
    assert f"No run 'nope': not a directory, nor a run id in {tmp_path}/" in str(result.exception)
