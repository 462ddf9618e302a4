"""The embedded SmolLM2 model through LLMClient (real weights, real generation)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.local.backend import LocalBackend
from langmarl.llm.local.engine import shared_engine
from langmarl.testing.reference import greedy_reply

pytestmark = pytest.mark.slow

QUESTION = "What is 2+3? Answer with a number."


@pytest.fixture(scope="module")
def local() -> LLMConfig:
    return LLMConfig.from_preset("local").with_overrides(max_tokens=24)


def test_answers_as_the_engine_does_with_usage(local: LLMConfig) -> None:
    """The client adds nothing to the model: its greedy answer is the engine's, token for
    token (compared on this machine, never with an answer fixed elsewhere: issue 37)."""
    client = LLMClient(local.with_overrides(temperature=0.0))
    text, usage = client.chat_with_usage("", QUESTION)
    engine = greedy_reply(QUESTION, 24)
    assert text == engine.text and text.strip()
    assert usage["output"] == len(engine.token_ids) and usage["input"] > 5


def test_seed_reproduces_sampled_text(local: LLMConfig) -> None:
    client = LLMClient(local.with_overrides(temperature=1.0, seed=123, max_tokens=16))
    first = client.chat("", "Name a colour.")
    assert client.chat("", "Name a colour.") == first


def test_max_tokens_and_stop_are_honoured(local: LLMConfig) -> None:
    client = LLMClient(local.with_overrides(temperature=0.0))
    result = client.complete(
        [{"role": "user", "content": "Count from 1 to 20, separated by commas."}], max_tokens=5
    )
    assert result.output_tokens == 5 and result.finish_reason == "length"
    stopped = client.complete(
        [{"role": "user", "content": "Count from 1 to 20, separated by commas."}],
        max_tokens=40,
        stop=["4"],
    )
    assert "4" not in stopped.text and stopped.finish_reason == "stop"


def test_concurrent_requests_share_batches(local: LLMConfig) -> None:
    engine = shared_engine()
    client = LLMClient(local.with_overrides(temperature=0.0, max_tokens=8))

    async def ask_all() -> list[str]:
        prompts = [f"Say the number {i}." for i in range(6)]
        return await asyncio.gather(*[client.achat("", p) for p in prompts])

    client.chat("", "warm up")
    before = engine.batches
    replies = asyncio.run(ask_all())
    assert len(replies) == 6 and all(isinstance(r, str) for r in replies)
    assert engine.batches - before < 6  # several requests were generated together


def test_overlong_prompt_is_truncated_from_the_left_with_a_warning(
    local: LLMConfig, caplog: pytest.LogCaptureFixture
) -> None:
    backend = LocalBackend(local)
    engine = backend.engine.start()
    words = " ".join(["filler"] * (engine.context_length + 50))
    with caplog.at_level(logging.WARNING):
        ids = engine.encode_chat([{"role": "user", "content": words}], max_new_tokens=16)
    assert len(ids) == engine.context_length - 16
    assert "keeping the last" in caplog.text
