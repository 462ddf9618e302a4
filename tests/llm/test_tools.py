"""A conversation with tools (langmarl.llm.tools): the plain-text CALL protocol with a scripted
model, and function calling through a real local HTTP server, over a toy toolset."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.tools import (
    MAX_CALLS_PER_ROUND,
    ToolOutput,
    ToolPrompts,
    Toolset,
    ToolUse,
    converse,
    parse_call_lines,
)
from langmarl.llm.types import ToolSpec, message_text
from langmarl.testing import ScriptedLLM
from langmarl.testing.openai_stub import OpenAIStub, StubReply

PROMPTS = ToolPrompts(
    functions="\nYou may call add.", text="\nCALL add {...} to add.", done="Answer now.",
    images="The images.",
)  # fmt: skip
PNG = b"\x89PNG fake"


class Adder:
    """A toolset of one tool, ``add``, that also returns an image when asked."""

    def specs(self) -> list[ToolSpec]:
        schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
        return [ToolSpec("add", "Add one to a.", schema)]

    def describe(self) -> str:
        return 'CALL add {"a": 1}  -- add one to a'

    def call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        if name != "add" or not isinstance(arguments.get("a"), int):
            return ToolOutput(f"no tool {name!r} with {arguments}", ok=False)
        images = (PNG,) if arguments.get("image") else ()
        return ToolOutput(str(arguments["a"] + 1), images)


def test_the_adder_is_a_toolset():
    toolset: Toolset = Adder()  # structural: no base class to derive from
    assert toolset.call("add", {"a": 1}) == ToolOutput("2")


def test_parse_call_lines():
    assert parse_call_lines('CALL read_code {"iteration": 2}\n  CALL list_iterations') == [
        ("read_code", {"iteration": 2}),
        ("list_iterations", {}),
    ]
    assert parse_call_lines('CALL read_code {"iteration": 2} and more') == []
    assert parse_call_lines("CALL\nCALL x [1]\nCALL y {oops") == []
    deep = '{"iteration": ' + "[" * 100_000 + "]" * 100_000 + "}"  # past the parser's depth
    assert parse_call_lines(f"CALL read_code {deep}\nCALL list_iterations") == [
        ("list_iterations", {})
    ]  # skipped like any line that does not parse (issue 39)


def test_call_lines_are_answered_in_one_results_turn_then_the_reply_is_final():
    llm = ScriptedLLM(['CALL add {"a": 1}\nCALL nope {}', "the answer is 2"])
    transcript = converse(llm, "system", "question", Adder(), 3, PROMPTS)
    assert transcript.reply == "the answer is 2" and transcript.protocol == "text"
    assert transcript.calls == [
        ToolUse(name="add", arguments={"a": 1}, round=1),
        ToolUse(name="nope", arguments={}, round=1, ok=False),
    ]
    first, second = (r.messages for r in llm.backend.requests)
    assert message_text(first[0]) == "system" + PROMPTS.text
    results = message_text(second[-1])
    assert (
        results.startswith('Results:\n[add {"a": 1}]\n2\n\n[nope {}]') and "Answer" not in results
    )


def test_rounds_are_capped_and_extra_calls_in_a_reply_are_refused():
    calls = "\n".join(f'CALL add {{"a": {i}}}' for i in range(MAX_CALLS_PER_ROUND + 2))
    llm = ScriptedLLM([calls, calls, "done"])
    transcript = converse(llm, "s", "u", Adder(), 2, PROMPTS)
    assert transcript.reply == "done" and len(llm.backend.requests) == 3
    assert [c.round for c in transcript.calls] == [1] * MAX_CALLS_PER_ROUND + [2] * 4
    last = message_text(llm.backend.requests[-1].messages[-1])
    assert f"only the first {MAX_CALLS_PER_ROUND} calls" in last and last.endswith("Answer now.")


def test_a_final_reply_ends_the_conversation_and_no_rounds_is_one_plain_call():
    llm = ScriptedLLM(['FINAL\nCALL add {"a": 1}'])
    transcript = converse(llm, "s", "u", Adder(), 3, PROMPTS, final=lambda r: "FINAL" in r)
    assert transcript.calls == [] and len(llm.backend.requests) == 1
    plain = ScriptedLLM(["hi"])
    assert converse(plain, "s", "u", Adder(), 0, PROMPTS).protocol == "none"
    assert converse(plain, "s", "u", None, 2, PROMPTS).protocol == "none"
    assert all("CALL" not in message_text(r.messages[0]) for r in plain.backend.requests)


def _stub_reply(body: dict[str, Any]) -> str | StubReply:
    if any(m["role"] == "tool" for m in body["messages"]):
        return "the sum is " + body["messages"][-2]["content"]
    if "tools" not in body:
        return 'CALL add {"a": 4}'
    return StubReply(tool_calls=[("add", {"a": 4, "image": 1}), ("add", {"b": 1})])


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(responder=_stub_reply) as server:
        yield server


def test_function_calls_are_answered_with_tool_messages_and_images(stub: OpenAIStub):
    stub.bodies.clear()
    llm = LLMClient(LLMConfig.model_validate(stub.llm_config("ok", is_multimodal=True)))
    transcript = converse(llm, "s", "u", Adder(), 2, PROMPTS)
    first, second = stub.bodies
    assert first["tools"] == [spec.openai() for spec in Adder().specs()]
    assert first["messages"][0]["content"] == "s" + PROMPTS.functions
    _, answer, refused, images = second["messages"][-4:]
    assert answer == {"role": "tool", "tool_call_id": "call_0", "content": "5"}
    assert refused["role"] == "tool" and "no tool" in refused["content"]
    assert [p["type"] for p in images["content"]] == ["text", "image_url"]
    assert transcript.protocol == "functions" and transcript.reply.startswith("the sum is")
    assert [c.ok for c in transcript.calls] == [True, False]


def test_a_conversation_falls_back_to_call_lines_when_tools_are_rejected(stub: OpenAIStub):
    stub.bodies.clear()
    llm = LLMClient(LLMConfig.model_validate(stub.llm_config("no-tools")))
    transcript = converse(llm, "s", "u", Adder(), 1, PROMPTS)
    rejected, call, final = stub.bodies
    assert "tools" in rejected and "tools" not in call and "tools" not in final
    assert call["messages"][0]["content"] == "s" + PROMPTS.text
    assert transcript.protocol == "text" and not llm.supports_tools
    assert transcript.calls == [ToolUse(name="add", arguments={"a": 4}, round=1)]
