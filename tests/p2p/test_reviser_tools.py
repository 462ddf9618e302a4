"""The reviser looking back through its tools: plain-text CALL lines through the real loop
(scripted model), and OpenAI function calling through a real HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.types import ChatRequest, message_text
from langmarl.p2p.agents import prompts
from langmarl.p2p.agents.lookback import TOOLS, Lookback
from langmarl.p2p.agents.reviser import has_code, revise
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.reward.env_specs import get_env_spec
from langmarl.p2p.session.contracts import JudgmentResult, ToolUse
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM
from langmarl.testing.openai_stub import OpenAIStub, StubReply

from .conftest import PENDULUM_REWARD
from .test_lookback import build_session, reward_source
from .test_loop import _run, replies

FIRST_REVISION = PENDULUM_REWARD.strip().replace('"""Keep', '"""First revision: keep')
CALL_REPLY = 'I will look back first.\nCALL read_code {"iteration": 1}'
FINAL = "```python\n" + reward_source(9) + "```\n" + '```json\n{"learning_rate": 9}\n```'


def _revise(llm: LLMClient, lookback: Lookback | None, rounds: int) -> Any:
    return revise(
        llm, intent="run", code="current code", judgment=JudgmentResult(intent_score=0.2),
        term_means={}, measurements="", config=TrainConfig(), spec=get_env_spec("Hopper-v5"),
        lookback=lookback, tool_rounds=rounds,
    )  # fmt: skip


def test_the_loop_reviser_reads_iteration_1_code_through_a_call_line(tmp_path: Path):
    """Iteration 2's revision: the model calls read_code for iteration 1, gets that code
    back in the next prompt, then revises (its hyperparameter change still clamped)."""

    def reply(request: ChatRequest) -> str:
        texts = [message_text(m) for m in request.messages]
        if "improve" not in texts[0]:
            return replies("SCORE: 0.2")(request)
        if texts[-1].startswith("Results:"):
            return FINAL
        if "First revision" in texts[1]:  # revising iteration 2
            return CALL_REPLY
        return f"```python\n{FIRST_REVISION}\n```"

    llm = ScriptedLLM(reply)
    result, _, session = _run(tmp_path, llm, max_iterations=3)
    assert [s.reward_origin for s in result.iterations] == ["author", "revision", "revision"]
    answered = [
        r.messages for r in llm.backend.requests if "Results" in message_text(r.messages[-1])
    ]
    assert len(answered) == 1
    system, _, call, results = answered[0]
    assert "CALL read_code" in message_text(system)  # the text protocol was offered
    assert call == {"role": "assistant", "content": CALL_REPLY}
    iteration_1_code = session.iteration(1).read_reward_source().strip()
    assert "First revision" not in iteration_1_code
    assert iteration_1_code in message_text(results)
    assert session.iteration(3).read_reward_source().strip() == reward_source(9).strip()
    assert result.iterations[1].hp_changes == {"learning_rate": 3e-3}
    revised = [e for e in RunDir(session.path).events() if e["event"] == "revised"]
    assert [e["tool_protocol"] for e in revised] == ["text", "text"]
    assert revised[0]["tool_calls"] == []
    call_1 = {"name": "read_code", "arguments": {"iteration": 1}, "round": 1, "ok": True}
    assert revised[1]["tool_calls"] == [call_1]


def test_unparseable_call_lines_are_ignored_and_rounds_are_capped(tmp_path: Path):
    llm = ScriptedLLM(["CALL read_code {oops\nCALL\nCALL list_iterations\nCALL read_code [1]"])
    result = _revise(llm, Lookback(build_session(tmp_path), current=2), rounds=2)
    assert len(llm.backend.requests) == 3  # two tool rounds, then the forced final reply
    assert [c.name for c in result.tool_calls] == ["list_iterations", "list_iterations"]
    assert [c.round for c in result.tool_calls] == [1, 2]
    last = message_text(llm.backend.requests[-1].messages[-1])
    assert "iteration 2 (current)" in last and last.endswith(prompts.REVISE_TOOLS_DONE)
    assert result.reward_code is None and "no revised code" in result.notes


def test_a_reply_with_code_is_final_and_zero_rounds_is_one_plain_call(tmp_path: Path):
    lookback = Lookback(build_session(tmp_path), current=2)
    with_code = ScriptedLLM([FINAL + "\nCALL read_code {}"])
    result = _revise(with_code, lookback, rounds=4)
    assert len(with_code.backend.requests) == 1 and result.tool_calls == []
    assert result.reward_code is not None and result.hp_changes == {"learning_rate": 3e-3}
    plain = ScriptedLLM([FINAL])
    result = _revise(plain, lookback, rounds=0)
    assert result.tool_protocol == "none" and len(plain.backend.requests) == 1
    assert "CALL" not in message_text(plain.backend.requests[0].messages[0])


def test_a_reply_with_a_code_block_is_final_even_with_call_lines():
    assert has_code("```python\nx = 1\n```\nCALL list_iterations")
    assert has_code("```python\nx = 1")  # unclosed: still the revision
    assert not has_code('CALL read_code {"iteration": 2}')


def _stub_reply(body: dict[str, Any]) -> str | StubReply:
    """Function calls first when tools are offered, else a CALL line; then the revision."""
    answered = any(m["role"] == "tool" for m in body["messages"])
    if answered or str(body["messages"][-1]["content"]).startswith("Results:"):
        return FINAL
    if "tools" not in body:
        return 'CALL read_code {"iteration": 1}'
    calls = [("read_code", {"iteration": 1}), ("view_frames", {"iteration": 1, "count": 2})]
    return StubReply(tool_calls=calls)


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIStub]:
    with OpenAIStub(responder=_stub_reply) as running:
        yield running


@pytest.fixture
def stub(server: OpenAIStub) -> OpenAIStub:
    server.bodies.clear()
    return server


def test_function_calls_through_http_are_answered_with_tool_messages(stub, tmp_path: Path):
    config = LLMConfig.model_validate(stub.llm_config("ok", is_multimodal=True))
    session = build_session(tmp_path, video=True)
    result = _revise(LLMClient(config), Lookback(session, current=2, images=True), rounds=3)
    first, second = stub.bodies
    assert [t["function"]["name"] for t in first["tools"]] == list(TOOLS)
    assistant, code, frames_note, frames = second["messages"][-4:]  # after [system, user]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["read_code", "view_frames"]
    assert code["role"] == "tool" and code["tool_call_id"] == "call_0"
    assert reward_source(1).strip() in code["content"]
    assert frames_note["tool_call_id"] == "call_1" and "2 frames" in frames_note["content"]
    assert [p["type"] for p in frames["content"]] == ["text", "image_url", "image_url"]
    assert result.tool_protocol == "functions" and result.reward_code == reward_source(9).strip()
    assert result.hp_changes == {"learning_rate": 3e-3}
    assert result.tool_calls == [
        ToolUse(name="read_code", arguments={"iteration": 1}, round=1),
        ToolUse(name="view_frames", arguments={"iteration": 1, "count": 2}, round=1),
    ]


def test_an_endpoint_that_rejects_tools_gets_call_lines_instead(stub, tmp_path: Path):
    llm = LLMClient(LLMConfig.model_validate(stub.llm_config("no-tools")))
    result = _revise(llm, Lookback(build_session(tmp_path), current=2), rounds=3)
    rejected, call, final = stub.bodies
    assert "tools" in rejected and "tools" not in call and "tools" not in final
    assert "CALL read_code" in call["messages"][0]["content"]
    assert reward_source(1).strip() in final["messages"][-1]["content"]
    assert result.tool_protocol == "text" and not llm.supports_tools
    assert result.tool_calls == [ToolUse(name="read_code", arguments={"iteration": 1}, round=1)]
    assert result.reward_code == reward_source(9).strip()
