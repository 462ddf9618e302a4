"""`langmarl serve` refuses bad options in one line, before it loads the model."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from langmarl.core.errors import ConfigError
from langmarl.llm.server import ServeConfig, bind_socket


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "langmarl.cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_out_of_range_port_is_one_line_and_exit_code_2() -> None:
    result = serve("--port", "99999")
    assert result.returncode == 2
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert lines == ["error: --port 99999: Input should be less than or equal to 65535"]


def test_a_port_in_use_is_one_line_and_exit_code_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        result = serve("--port", str(taken.getsockname()[1]))
    assert result.returncode == 1
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and "Cannot listen on 127.0.0.1:" in lines[0]
    assert "Traceback" not in result.stderr


def test_config_checks_its_limits() -> None:
    assert ServeConfig(max_tokens_cap=100).max_tokens_default == 100
    assert ServeConfig().max_tokens_default == 256
    with pytest.raises(ValueError, match="default_max_tokens"):
        ServeConfig(max_tokens_cap=100, default_max_tokens=200)
    with pytest.raises(ConfigError, match="below 8192"):
        ServeConfig(max_tokens_cap=8192).check_context(8192)
    with pytest.raises(ConfigError, match="another --host"):
        bind_socket("no-such-host.invalid", 0)


def test_a_model_that_is_not_one_is_one_line_before_loading(tmp_path) -> None:
    result = serve("--model", str(tmp_path / "nothing-here"), "--port", "0")
    assert result.returncode == 1
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1 and "neither a model directory nor a Hugging Face hub id" in lines[0]


def test_the_served_model_is_the_one_named(tmp_path) -> None:
    from langmarl.llm.local.weights import MODEL_NAME
    from langmarl.llm.server.app import local_backend

    (tmp_path / "config.json").write_text("{}")  # a save_pretrained directory (not loaded)
    assert local_backend(ServeConfig(model=str(tmp_path))).engine.model_name == str(tmp_path)
    assert local_backend(ServeConfig()).engine.model_name == MODEL_NAME
