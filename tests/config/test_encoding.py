"""Input files in another encoding, or cut short, give one line naming the file and the fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.cli import main
from langmarl.core.errors import ConfigError
from langmarl.datasets import StaticDataset

LATIN1 = '{"env": "language", "exp_name": "caf\xe9"}'.encode("latin-1")


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch) -> str:
    """``langmarl <args>`` in-process, through the console entry point; its stderr."""
    monkeypatch.setattr(sys, "argv", ["langmarl", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_non_utf8_config_is_one_line_through_the_real_cli(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(LATIN1)
    command = [sys.executable, "-m", "langmarl.cli", "config", "show", str(path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert str(path) in done.stderr and "not UTF-8" in done.stderr and "iconv" in done.stderr


def test_non_utf8_yaml_loop_config(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "loop.yaml"
    path.write_bytes("env_id: Hopper-v5  # d\xe9j\xe0\n".encode("latin-1"))
    err = run_cli(["p2p", "run", "hop", "--config", str(path)], capsys, monkeypatch)
    assert str(path) in err and "not UTF-8" in err


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("cut.json", '{\n  "env": "language",\n  "num_iterations": ', "line 3, column 21"),
        ("bad.json", '{"env": "language",,}', "line 1, column 20"),
        ("bad.yaml", "env: language\nllm: {preset: gpt-4o\n", "line 3, column 1"),
    ],
)
def test_corrupt_config_names_file_line_and_column(
    tmp_path: Path, capsys, monkeypatch, name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    err = run_cli(["config", "show", str(path)], capsys, monkeypatch)
    assert str(path) in err and where in err
    if name == "cut.json":
        assert "cut short" in err


def test_non_utf8_dataset_file_through_train(tmp_path: Path, capsys, monkeypatch) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_bytes('{"task_type": "qa", "question": "caf\xe9?"}\n'.encode("latin-1"))
    config = tmp_path / "config.json"
    llm = {"name": "x", "model_string": "ok", "base_url": "http://127.0.0.1:9/v1"}
    config.write_text(
        json.dumps(
            {
                "env": "language",
                "task_type": "qa",
                "benchmark_path": str(tasks),
                "llm": {**llm, "requires_api_key": False, "max_retries": 0},
                "runs_dir": str(tmp_path / "runs"),
                "checkpoint_dir": str(tmp_path / "ck"),
            }
        )
    )
    err = run_cli(["train", str(config)], capsys, monkeypatch)
    assert str(tasks) in err and "not UTF-8" in err and "byte 36 is 0xe9" in err


def test_static_dataset_json_files(tmp_path: Path) -> None:
    latin = tmp_path / "latin.json"
    latin.write_bytes('[{"prompt": "caf\xe9"}]'.encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin\.json' is not UTF-8 text \(byte 16 is 0xe9"):
        StaticDataset(latin)
    cut = tmp_path / "cut.json"
    cut.write_text('[{"prompt": "a"}, {"prompt": ')
    with pytest.raises(
        ConfigError, match=r"cut\.json' is not valid JSON: .* line 1, column 30 .*cut short"
    ):
        StaticDataset(cut)
