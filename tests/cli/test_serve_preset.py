"""The `langmarl-serve` preset reaches a server on any port: `--port N` / `--base-url URL`."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.errors import ConfigError
from langmarl.llm.presets import get_llm_config
from langmarl.testing.openai_stub import OpenAIStub


def test_port_and_base_url_point_the_preset_elsewhere() -> None:
    assert get_llm_config("langmarl-serve").base_url == "http://127.0.0.1:8000/v1"
    assert get_llm_config("langmarl-serve", port=9001).base_url == "http://127.0.0.1:9001/v1"
    url = "http://gpu-box:8000/v1"
    assert get_llm_config("langmarl-serve", base_url=url).base_url == url
    assert get_llm_config("vllm", port=9002).model_string == "default"


def test_contradictions_are_refused() -> None:
    with pytest.raises(ConfigError, match="not both"):
        get_llm_config("langmarl-serve", base_url="http://x:1/v1", port=2)
    with pytest.raises(ConfigError, match="use --llm langmarl-serve"):
        get_llm_config("local", port=9000)


def test_chat_reaches_a_server_on_another_port() -> None:
    with OpenAIStub(responder=lambda body: "hello from the stub") as stub:
        port = stub.base_url.rsplit(":", 1)[1].split("/")[0]
        result = CliRunner().invoke(
            build_app(), ["chat", "hi", "--llm", "langmarl-serve", "--port", port]
        )
    assert result.exit_code == 0, result.output
    assert "hello from the stub" in result.output
