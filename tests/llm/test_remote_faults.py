"""The OpenAI-compatible path against a real local HTTP server that injects faults."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from langmarl.core.errors import LLMError, MissingAPIKeyError
from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.testing.openai_stub import OpenAIStub


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(hang_seconds=3.0, responder=lambda body: "5") as server:
        yield server


def client_for(stub: OpenAIStub, model: str, **fields: object) -> LLMClient:
    defaults: dict[str, object] = {
        "name": f"stub-{model}",
        "model_string": model,
        "base_url": stub.base_url,
        "api_key": "test-key",
        "timeout": 0.5,
        "max_retries": 2,
        "retry_initial_wait": 0.01,
    }
    return LLMClient(LLMConfig.model_validate(defaults | fields))


def test_answer_and_usage_through_http(stub: OpenAIStub) -> None:
    text, usage = client_for(stub, "ok").chat_with_usage("sys", "What is 2+3?")
    assert text == "5"
    assert usage == {"input": 10, "output": 2}
    assert stub.bodies[-1]["messages"][1]["content"] == "What is 2+3?"


@pytest.mark.parametrize("model", ["flaky-429", "flaky-500"])
def test_transient_statuses_are_retried(stub: OpenAIStub, model: str) -> None:
    assert client_for(stub, model).chat("", "q") == "5"
    assert stub.hits[model] == 3


def test_retry_after_header_is_honoured(stub: OpenAIStub) -> None:
    import time

    began = time.monotonic()
    assert client_for(stub, "retry-after").chat("", "q") == "5"
    assert time.monotonic() - began >= 1.0  # waited as the server asked, not 0.01 s
    assert stub.hits["retry-after"] == 2


def test_persistent_500_gives_typed_error_with_url(stub: OpenAIStub) -> None:
    with pytest.raises(LLMError) as info:
        client_for(stub, "always-500").chat("", "q")
    assert stub.hits["always-500"] == 3
    assert info.value.endpoint == stub.base_url
    assert "HTTP 500" in info.value.cause
    assert stub.base_url in str(info.value)


def test_401_is_not_retried_and_says_check_the_key(stub: OpenAIStub) -> None:
    with pytest.raises(LLMError, match="check the API key"):
        client_for(stub, "always-401").chat("", "q")
    assert stub.hits["always-401"] == 1


def test_hang_times_out_per_attempt(stub: OpenAIStub) -> None:
    with pytest.raises(LLMError, match="timed out"):
        client_for(stub, "hang", max_retries=1).chat("", "q")
    assert stub.hits["hang"] == 2


@pytest.mark.parametrize("model", ["garbage", "empty"])
def test_malformed_replies_give_clear_errors(stub: OpenAIStub, model: str) -> None:
    with pytest.raises(LLMError, match="malformed reply"):
        client_for(stub, model).chat("", "q")


def test_unreachable_endpoint_names_the_url() -> None:
    config = LLMConfig(
        name="nowhere",
        model_string="m",
        base_url="http://127.0.0.1:9/v1",
        api_key="k",
        max_retries=1,
        retry_initial_wait=0.01,
    )
    with pytest.raises(LLMError, match=r"127\.0\.0\.1:9.*cannot connect"):
        LLMClient(config).chat("", "q")


def test_missing_key_names_the_env_var_and_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError) as info:
        LLMClient(LLMConfig.from_preset("gpt-4o-mini"))
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "llm='local'" in message


def test_reasoning_models_get_max_completion_tokens(stub: OpenAIStub) -> None:
    client_for(stub, "o4-mini", temperature=0.5).chat("", "q", max_tokens=33)
    body = stub.bodies[-1]
    assert body["max_completion_tokens"] == 33
    assert "max_tokens" not in body and "temperature" not in body
