"""A request that fails inside a batch fails alone (generation and engine, with a fake model)."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from langmarl.llm.local.engine import LocalEngine
from langmarl.llm.local.generation import GenJob, GenOutput, generate_batch, generate_rows

VOCAB = 40
EOS = 0
POISON = 33  # the fake model raises when it reads this token


class FakeCache:
    def batch_select_indices(self, keep: torch.Tensor) -> None:
        pass


class FakeModel:
    """Always predicts ``last token + 1``; raises on :data:`POISON` like a broken forward."""

    config = SimpleNamespace(max_position_embeddings=64)

    def __call__(self, input_ids: torch.Tensor, **_: Any) -> SimpleNamespace:
        if (input_ids == POISON).any():
            raise RuntimeError("poisoned input")
        logits = torch.zeros((*input_ids.shape[:1], 1, VOCAB))
        logits[torch.arange(len(input_ids)), 0, (input_ids[:, -1] + 1) % VOCAB] = 10.0
        return SimpleNamespace(logits=logits, past_key_values=FakeCache())


class FakeTokenizer:
    eos_token_id = EOS
    pad_token_id = EOS

    def decode(self, tokens: list[int], skip_special_tokens: bool = True) -> str:
        return "".join(chr(ord("a") + t % 26) for t in tokens)


def run(*jobs: GenJob) -> list[GenOutput | Exception]:
    return generate_rows(FakeModel(), FakeTokenizer(), list(jobs))


def test_a_failing_callback_fails_only_its_row() -> None:
    def broken(piece: str) -> None:
        raise RuntimeError("reader crashed")

    alone = run(GenJob([5], 4, temperature=0))[0]
    results = run(GenJob([5], 4, temperature=0), GenJob([9], 4, on_text=broken), GenJob([5], 4))
    assert isinstance(results[1], RuntimeError)
    assert results[0] == alone and isinstance(results[2], GenOutput)
    assert isinstance(alone, GenOutput) and alone.text == "ghij"


def test_a_nan_that_slips_past_validation_fails_only_its_row() -> None:
    bad = GenJob([5], 4, temperature=1.0)
    bad.temperature = float("nan")  # GenJob refuses NaN; simulate a caller that mutates it
    results = run(GenJob([5], 4, temperature=0), bad, GenJob([7], 3, temperature=0.7, seed=1))
    assert isinstance(results[1], ValueError) and "temperature" in str(results[1])
    assert [type(r) for r in (results[0], results[2])] == [GenOutput, GenOutput]


def test_generate_batch_raises_a_row_failure() -> None:
    def broken(piece: str) -> None:
        raise ValueError("nope")

    with pytest.raises(ValueError, match="nope"):
        generate_batch(FakeModel(), FakeTokenizer(), [GenJob([5], 2, on_text=broken)])


def test_a_tiny_temperature_samples_like_greedy() -> None:
    results = run(GenJob([5], 3, temperature=1e-300), GenJob([5], 3, temperature=0))
    assert isinstance(results[0], GenOutput) and results[0] == results[1]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"temperature": float("nan")}, "temperature"),
        ({"temperature": -1.0}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": float("inf")}, "top_p"),
        ({"seed": 2**70}, "seed"),
        ({"stop": [""]}, "stop"),
        ({"prompt_ids": []}, "prompt_ids"),
    ],
)
def test_gen_job_refuses_settings_that_would_fail_in_the_batch(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        GenJob(**{"prompt_ids": [5], "max_new_tokens": 4, **fields})


@pytest.fixture
def engine() -> Iterator[LocalEngine]:
    fake = LocalEngine(loader=lambda _: (FakeModel(), FakeTokenizer()), batch_window=0.2, threads=1)
    yield fake.start()
    fake.close()


def test_a_failing_model_call_is_retried_one_request_at_a_time(engine: LocalEngine) -> None:
    jobs = [GenJob([5], 4, temperature=0), GenJob([POISON], 4), GenJob([9], 4, temperature=0)]
    futures = [engine.submit(job) for job in jobs]
    concurrent.futures.wait(futures, timeout=10)
    assert futures[0].result().text == "ghij" and futures[2].result().text == "klmn"
    assert isinstance(futures[1].exception(), RuntimeError)
    assert engine.batches == 1
    assert engine.submit(GenJob([1], 2, temperature=0)).result(timeout=10).text == "cd"


def test_a_stream_that_already_sent_text_is_not_replayed(engine: LocalEngine) -> None:
    streamed: list[str] = []
    late = GenJob([POISON - 3], 6, temperature=0, on_text=streamed.append)  # POISON at step 3
    futures = [engine.submit(late), engine.submit(GenJob([5], 4, temperature=0))]
    concurrent.futures.wait(futures, timeout=10)
    assert isinstance(futures[0].exception(), RuntimeError)
    assert streamed == ["f", "g", "h"]  # once: no replay
    assert futures[1].result().text == "ghij"
