"""LLMClient over a scripted backend: retries, typed errors, usage by role."""

from __future__ import annotations

import asyncio

import openai
import pytest

from langmarl.core.errors import ConfigError, LLMError
from langmarl.llm.client import LLMClient
from langmarl.llm.tracker import UsageLedger
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.testing.scripted import ScriptedBackend


def fast_config(**fields: object):
    return scripted_config(retry_initial_wait=0.0, **fields)


def timeout_error() -> openai.APITimeoutError:
    import httpx

    return openai.APITimeoutError(request=httpx.Request("POST", "http://x"))


def test_chat_returns_reply_and_counts_usage() -> None:
    client = ScriptedLLM(["four words in reply"])
    text, usage = client.chat_with_usage("be brief", "hello there")
    assert text == "four words in reply"
    assert usage == {"input": 4, "output": 4}
    assert client.tracker.get_stats()["calls"] == 1
    sent = client.backend.requests[0].messages  # type: ignore[attr-defined]
    assert sent == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello there"},
    ]


def test_transient_failures_are_retried_then_succeed() -> None:
    client = ScriptedLLM([timeout_error(), timeout_error(), "ok"], config=fast_config())
    assert client.chat("", "q") == "ok"
    assert len(client.backend.requests) == 3  # type: ignore[attr-defined]


def test_retries_exhausted_raise_llm_error_naming_endpoint_and_model() -> None:
    client = ScriptedLLM([timeout_error()], config=fast_config(max_retries=1))
    with pytest.raises(LLMError) as info:
        client.chat("", "q")
    assert info.value.endpoint == "scripted"
    assert "timed out" in str(info.value)
    assert len(client.backend.requests) == 2  # type: ignore[attr-defined]


def test_non_retryable_error_fails_at_once() -> None:
    client = ScriptedLLM([ValueError("bad")], config=fast_config(max_retries=3))
    with pytest.raises(LLMError, match="ValueError: bad"):
        client.chat("", "q")
    assert len(client.backend.requests) == 1  # type: ignore[attr-defined]


def test_ledger_attributes_usage_and_failures_by_role() -> None:
    ledger = UsageLedger()
    actor = ScriptedLLM(["a b"], role="actor", ledger=ledger)
    critic = actor.with_role("critic")
    actor.chat("", "one")
    critic.chat("", "two three")
    failing = ScriptedLLM([ValueError("x")], role="judge", ledger=ledger, config=fast_config())
    with pytest.raises(LLMError):
        failing.chat("", "q")
    roles = ledger.by_role()
    assert roles["actor"]["calls"] == 1 and roles["actor"]["output_tokens"] == 2
    assert roles["critic"]["input_tokens"] == 2
    assert roles["judge"]["failures"] == 1
    assert ledger.totals()["calls"] == 3


def test_sync_chat_works_inside_a_running_event_loop() -> None:
    client = ScriptedLLM(["fine"])

    async def caller() -> str:
        return client.chat("", "q")

    assert asyncio.run(caller()) == "fine"


async def test_concurrency_is_bounded_per_endpoint() -> None:
    in_flight = 0
    peak = 0

    class Counting(ScriptedBackend):
        async def complete(self, request):  # type: ignore[no-untyped-def]
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            return await super().complete(request)

    backend = Counting(["r"])
    backend.endpoint = "counting-endpoint"
    clients = [LLMClient(fast_config(max_concurrency=3), backend=backend) for _ in range(2)]
    await asyncio.gather(*[clients[i % 2].achat("", f"q{i}") for i in range(12)])
    assert peak == 3


def test_images_need_a_multimodal_model(tmp_path) -> None:
    image = tmp_path / "pixel.png"
    image.write_bytes(b"\x89PNG fake")
    client = ScriptedLLM(["seen"])
    with pytest.raises(ConfigError, match="not multimodal"):
        client.chat("", "what is this?", images=[image])
    multimodal = ScriptedLLM(["seen"], config=fast_config(is_multimodal=True))
    assert multimodal.chat("", "what is this?", images=[image]) == "seen"
    content = multimodal.backend.requests[0].messages[-1]["content"]  # type: ignore[attr-defined]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_config_defaults_reach_the_request() -> None:
    client = ScriptedLLM(["r"], config=fast_config(temperature=0.3, max_tokens=77, seed=5))
    client.chat("", "q")
    request = client.backend.requests[0]  # type: ignore[attr-defined]
    assert (request.temperature, request.max_tokens, request.seed) == (0.3, 77, 5)
    client.chat("", "q", max_tokens=9)
    assert client.backend.requests[1].max_tokens == 9  # type: ignore[attr-defined]
