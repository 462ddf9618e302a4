"""OpenAI function calling through the client and the real OpenAIBackend, against a real
local HTTP server (the scripted stub)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from langmarl.core.errors import ConfigError
from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.types import (
    ToolCall,
    ToolSpec,
    ToolsUnsupportedError,
    assistant_message,
    tool_message,
)
from langmarl.testing import ScriptedLLM
from langmarl.testing.openai_stub import OpenAIStub, StubReply

ADD = ToolSpec(
    "add",
    "Add two integers.",
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
)


def _reply(body: dict[str, Any]) -> str | StubReply:
    if body["messages"][-1]["role"] == "tool":
        return f"the sum is {body['messages'][-1]['content']}"
    return StubReply(tool_calls=[("add", {"a": 2, "b": 3})])


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(responder=_reply) as server:
        yield server


def _client(stub: OpenAIStub, model: str) -> LLMClient:
    return LLMClient(LLMConfig.model_validate(stub.llm_config(model)))


def test_tools_go_out_in_openai_format_and_calls_come_back_typed(stub: OpenAIStub) -> None:
    client = _client(stub, "ok")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "2+3?"}]
    result = client.chat_with_tools(messages, [ADD])
    assert stub.bodies[-1]["tools"] == [ADD.openai()] and "tool_choice" not in stub.bodies[-1]
    assert result.text == "" and result.finish_reason == "tool_calls"
    assert result.tool_calls == (ToolCall("call_0", "add", {"a": 2, "b": 3}, '{"a": 2, "b": 3}'),)
    follow_up = [*messages, assistant_message(result), tool_message(result.tool_calls[0], "5")]
    final = client.chat_with_tools(follow_up, [ADD], tool_choice="none")
    sent = stub.bodies[-1]
    assert final.text == "the sum is 5" and final.tool_calls == ()
    assert sent["tool_choice"] == "none"
    assert sent["messages"][1]["tool_calls"][0]["function"] == {
        "name": "add",
        "arguments": '{"a": 2, "b": 3}',
    }
    assert sent["messages"][2] == {"role": "tool", "tool_call_id": "call_0", "content": "5"}


def test_an_endpoint_that_rejects_tools_raises_once_then_takes_no_tools(stub: OpenAIStub) -> None:
    client = _client(stub, "no-tools")
    assert client.supports_tools
    with pytest.raises(ToolsUnsupportedError, match="tools rejected"):
        client.chat_with_tools([{"role": "user", "content": "2+3?"}], [ADD])
    assert not client.supports_tools and not client.with_role("other").supports_tools
    with pytest.raises(ConfigError, match="takes no tools"):
        client.chat_with_tools([{"role": "user", "content": "2+3?"}], [ADD])


def test_a_client_without_tool_support_refuses_tools() -> None:
    scripted = ScriptedLLM(["hi"])
    assert not scripted.supports_tools
    with pytest.raises(ConfigError, match="describe the tools in plain text"):
        scripted.chat_with_tools([{"role": "user", "content": "x"}], [ADD])
    assert scripted.backend.requests == []


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("{not json", "arguments are not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nest too deeply"),
    ],  # issue 39
)
def test_arguments_that_are_not_a_json_object_are_kept_with_the_reason(raw, error) -> None:
    call = ToolCall.parse("c1", "add", raw)
    assert call.arguments == {} and call.raw_arguments == raw
    assert call.parse_error is not None and error in call.parse_error
    assert ToolCall.parse("c2", "add", None).arguments == {}
