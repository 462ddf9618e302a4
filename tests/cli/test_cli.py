"""The `langmarl` command: help, models, config show, chat, errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(build_app(), list(args))
    return result.exit_code, result.output


def test_help_lists_subcommands() -> None:
    code, output = invoke("--help")
    assert code == 0
    for command in ("models", "chat", "serve", "config"):
        assert command in output


def test_models_lists_presets_and_local_status() -> None:
    code, output = invoke("models")
    assert code == 0
    assert "gpt-4o-mini" in output and "Embedded model" in output


def test_config_show_resolves_and_masks(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    secret = "sk-cli-secret-123456789"
    path.write_text(json.dumps({"env": "language", "llm": {"preset": "gpt-4o", "api_key": secret}}))
    code, output = invoke("config", "show", str(path), "--set", "num_iterations=7")
    assert code == 0, output
    assert secret not in output
    data = json.loads(output)
    assert data["num_iterations"] == 7
    assert data["critic_llm"]["name"] == "gpt-4o" and data["critic_llm"]["api_key"] == "***"


def test_bad_config_is_one_clear_line_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"num_iteration": 3}))
    result = subprocess.run(
        [sys.executable, "-m", "langmarl.cli", "config", "show", str(path)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Did you mean 'num_iterations'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_chat_with_the_embedded_model() -> None:
    """In process: the command answers from the process's engine, which the embedded model's
    other tests share (a subprocess loaded the model for this one answer: 6 CPU-s); starting
    ``python -m langmarl.cli`` is the other subprocess tests' part."""
    code, output = invoke("chat", "What is 2+3? Answer with a number.", "--max-tokens", "12")
    assert code == 0, output
    # the reply is sampled (the preset's temperature), so only its presence is checked here;
    # what the model answers is compared with the engine in tests/llm/test_local_model.py
    reply, usage = output.splitlines()[:2]
    assert reply.startswith("local: ") and reply.removeprefix("local: ").strip(), output
    counted = re.fullmatch(r"local: 1 calls, \d+ in \+ (\d+) out = \d+ tokens, \$0\.0000", usage)
    assert counted and 0 < int(counted[1]) <= 12, output
