"""The local engines (issues 16, 25 and 37): choosing one, and the ct2 and w16 engines against
the transformers (fp32) engine on the real embedded model, **on the machine the tests run on**.

No answer is fixed here: which kernels torch, MKL, fbgemm and CTranslate2 pick depends on the
CPU (AVX2, AVX-512, AMX), and so do the last bits of every logit. On an AVX2-only AMD EPYC the
fp32 engine itself answered 21 of the 25 check-set questions right (25 on the AVX-512 machine
the project was developed on) and ct2 answered "What is 2+3?" with "2+2, which is 4". So each
engine is compared with fp32 run here, on the same prompts:

- w16 (fp16 weights, fp32 arithmetic): fp32's greedy tokens, every one (measured: 25 of 25
  identical on both CPU kinds).
- ct2 (int8 weights and arithmetic): of the questions fp32 answers right here, ct2 must answer
  at least :data:`CT2_KEEPS` right (measured on the AVX-512 machine: 21 of 25, the four misses
  in benchmarks/RESULTS.md). Its tokens are not compared: int8 logits part from fp32's a few
  tokens in, at a place that depends on the kernels.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.llm.local import engines as engines_module
from langmarl.llm.local.ct2 import _plain_source
from langmarl.llm.local.engine import LocalEngine, shared_engine
from langmarl.llm.local.engines import (
    CHECK_SET,
    ENGINE_ENV_VAR,
    agreement,
    passes_check,
    resolve_engine,
)
from langmarl.llm.local.generation import GenJob, GenOutput

CT2_KEEPS = 0.75
"""The share of the check-set questions fp32 answers right here that ct2 must answer right too
(it kept 21 of 25 where it was measured: 0.84, and 20 of fp32's 24 at this module's 16 tokens
on an emulated AVX2-only EPYC, ``qemu-x86_64 -cpu EPYC-Rome``: 0.83; its misses — "3 times
3" → modular arithmetic, "4 + 4 = 16", a triangle's sides, Mars — are one reason it is not the
default)."""
CHECK_TOKENS = 16
"""The check set's token budget here (the benchmark's is 32): fp32's right answers come in the
first dozen tokens, and the rows that run to the budget are most of a batch's cost. Measured
here with 16: fp32 answered 24 of 25 right (25 with 32), ct2 kept 22 of those 24 (0.92; 24 of
25 with 32), w16 every token (a prefix of its 32 tokens)."""
CHECK_QUESTIONS = [(question, CHECK_TOKENS) for question, _ in CHECK_SET] + [
    ("What is 2+3? Answer with a number.", 24)  # tests/llm/test_local_model.py's prompt
]
"""Every prompt an engine is compared on, with its token budget; all asked as one batch."""


def test_resolve_engine_names_the_field_and_suggests() -> None:
    with pytest.raises(ConfigError, match=r"extra_params\['engine'\] is 'ct3'.*'ct2'"):
        resolve_engine("ct3")


def test_resolve_engine_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_ENV_VAR, "bf16")
    assert resolve_engine(None) == "bf16"
    assert resolve_engine("transformers") == "transformers"  # the config wins
    monkeypatch.setenv(ENGINE_ENV_VAR, "fast")
    with pytest.raises(ConfigError, match=r"\$LANGMARL_LOCAL_ENGINE is 'fast'"):
        resolve_engine(None)


def test_ct2_serves_only_the_embedded_model() -> None:
    assert resolve_engine("ct2", embedded=True) == "ct2"
    assert resolve_engine("ct2", embedded=False) == "transformers"


def test_the_default_serves_the_embedded_model_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENGINE_ENV_VAR, raising=False)
    monkeypatch.setattr(engines_module, "DEFAULT_ENGINE", "w16")
    assert resolve_engine(None, embedded=True) == "w16"
    assert resolve_engine(None, embedded=False) == "transformers"  # never checked elsewhere
    assert resolve_engine("w16", embedded=False) == "w16"  # named: as asked


def test_a_default_this_torch_cannot_run_falls_back_loudly(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(ENGINE_ENV_VAR, raising=False)
    monkeypatch.setattr(engines_module, "DEFAULT_ENGINE", "w16")
    monkeypatch.setattr(engines_module, "_fp16_runnable", lambda: False)
    assert resolve_engine(None) == "transformers"
    assert "cannot run the default engine 'w16'" in caplog.text


def test_agreement_counts_tokens_up_to_the_first_difference() -> None:
    reference = [[1, 2, 3, 4], [5, 6], [7, 8, 9, 10]]
    assert agreement(reference, reference) == (3, 1.0)
    ours = [[1, 2, 3, 4], [5, 0], [7, 0, 9, 10]]  # matching again after a difference: no credit
    assert agreement(ours, reference) == (1, (4 + 1 + 1) / 10)
    assert agreement([[1, 2], [5, 6], [7, 8, 9, 10, 11]], reference) == (1, (2 + 2 + 4) / 10)
    with pytest.raises(ValueError, match="2 answers against 3"):
        agreement(ours[:2], reference)


def test_passes_check_wants_the_whole_answer() -> None:
    assert passes_check("2 + 3 = 5", ("5", "five"))
    assert passes_check("Five.", ("5", "five"))
    assert not passes_check("A: 2.25", ("5",))
    assert not passes_check("It is 15.", ("5",))
    assert not passes_check("5.5 it is", ("5",))


def test_conversion_source_drops_the_gguf_quantization_config(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "config.json").write_text(
        json.dumps({"model_type": "llama", "quantization_config": {"quant_method": "gguf"}})
    )
    (source / "model.safetensors").write_bytes(b"weights")
    plain = _plain_source(source, tmp_path / "plain")
    assert json.loads((plain / "config.json").read_text()) == {"model_type": "llama"}
    assert (plain / "model.safetensors").read_bytes() == b"weights"
    assert "quantization_config" in (source / "config.json").read_text()  # untouched


@pytest.fixture(scope="module")
def fallback() -> Iterator[LocalEngine]:
    engine = LocalEngine(engine_kind="transformers", batch_window=0.5).start()
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def engines(fallback: LocalEngine) -> Iterator[tuple[LocalEngine, LocalEngine]]:
    fast = LocalEngine(engine_kind="ct2", batch_window=0.5).start()
    yield fast, fallback
    fast.close()


def ids(engine: LocalEngine, text: str) -> list[int]:
    return engine.encode_chat([{"role": "user", "content": text}], 32)


def done(output: GenOutput | BaseException) -> GenOutput:
    assert isinstance(output, GenOutput), output
    return output


def greedy_answers(engine: LocalEngine) -> list[GenOutput]:
    """``engine``'s greedy answers to :data:`CHECK_QUESTIONS`, submitted together (one batch)."""
    jobs = [GenJob(ids(engine, q), budget, temperature=0.0) for q, budget in CHECK_QUESTIONS]
    return [done(future.result()) for future in [engine.submit(job) for job in jobs]]


@pytest.fixture(scope="module")
def fp32_answers(fallback: LocalEngine) -> list[GenOutput]:
    """The reference: fp32's greedy answers on this machine."""
    return greedy_answers(fallback)


@pytest.mark.slow
def test_ct2_answers_most_of_what_fp32_answers_here(
    engines: tuple[LocalEngine, LocalEngine], fp32_answers: list[GenOutput]
) -> None:
    fast, fallback = engines
    assert fast.model_name == fallback.model_name
    ours = greedy_answers(fast)
    checked = zip(fp32_answers[: len(CHECK_SET)], CHECK_SET, strict=True)
    right_here = [i for i, (answer, (_, ok)) in enumerate(checked) if passes_check(answer.text, ok)]
    assert len(right_here) >= len(CHECK_SET) // 2, "fp32 itself misses most of the check set"
    kept = [i for i in right_here if passes_check(ours[i].text, CHECK_SET[i][1])]
    missed = {CHECK_SET[i][0]: ours[i].text for i in right_here if i not in kept}
    assert len(kept) >= CT2_KEEPS * len(right_here), missed
    assert all(answer.token_ids for answer in ours)  # and it answered every prompt


@pytest.mark.slow
def test_w16_gives_fp32s_greedy_tokens(fp32_answers: list[GenOutput]) -> None:
    """The check set and tests/llm/test_local_model.py's 2+3 prompt, submitted together on
    both engines: every answer token for token (measured: 26 of 26 here, and 25 of 25 asked one at
    a time in benchmarks/llm_local.py, on both an AVX-512 and an AVX2-only CPU)."""
    # the process's w16 engine (its default one where torch has fbgemm, which the embedded
    # model's other tests load anyway): one load less
    ours = greedy_answers(shared_engine(engine="w16").start())
    assert [o.token_ids for o in ours] == [t.token_ids for t in fp32_answers]
    assert all(answer.token_ids for answer in ours)


@pytest.mark.slow
def test_ct2_batch_keeps_each_requests_settings(
    engines: tuple[LocalEngine, LocalEngine],
) -> None:
    fast, fallback = engines
    poem = ids(fast, "Write a poem about the sea.")
    alone = fast.submit(GenJob(poem, 10, temperature=0.0)).result()
    pieces: list[str] = []

    def broken(_: str) -> None:
        raise RuntimeError("this reader broke")

    jobs = [
        GenJob(poem, 10, temperature=0.0),
        GenJob(poem, 7, temperature=0.0, on_text=pieces.append),
        GenJob(poem, 40, temperature=0.0, stop=[","]),
        GenJob(poem, 12, temperature=0.9, seed=7),
        GenJob(poem, 12, temperature=0.9, top_p=0.5),
        GenJob(poem, 0, temperature=0.0),
        GenJob(poem, 5, temperature=0.0, on_text=broken),
    ]
    before = fast.batches
    futures = [fast.submit(job) for job in jobs]
    results = [f.exception() or f.result() for f in futures]
    assert fast.batches == before + 1  # one batch, whatever the settings
    greedy, streamed, stopped, seeded, sampled, empty, failed = results
    assert done(greedy).token_ids == alone.token_ids  # companions change nothing
    assert len(done(streamed).token_ids) == 7 and "".join(pieces) == done(streamed).text
    assert "," not in done(stopped).text and done(stopped).finish_reason == "stop"
    assert done(stopped).text and len(done(stopped).token_ids) < 40
    exact = fallback.submit(GenJob(poem, 12, temperature=0.9, seed=7)).result()
    assert done(seeded).token_ids == exact.token_ids  # a seed means the same text
    assert 1 <= len(done(sampled).token_ids) <= 12
    assert done(empty).token_ids == [] and done(empty).text == ""
    assert isinstance(failed, RuntimeError) and "reader broke" in str(failed)


@pytest.mark.slow
def test_ct2_seeded_sampling_is_reproducible(engines: tuple[LocalEngine, LocalEngine]) -> None:
    fast, _ = engines
    prompt = ids(fast, "Name a colour.")
    first = fast.submit(GenJob(prompt, 12, temperature=1.0, seed=123)).result()
    again = fast.submit(GenJob(prompt, 12, temperature=1.0, seed=123)).result()
    other = fast.submit(GenJob(prompt, 12, temperature=1.0, seed=124)).result()
    assert first.token_ids == again.token_ids
    assert other.token_ids != first.token_ids


@pytest.mark.slow
def test_ct2_eos_ends_with_stop(engines: tuple[LocalEngine, LocalEngine]) -> None:
    fast, _ = engines
    result = fast.submit(GenJob(ids(fast, "Say hi."), 100, temperature=0.0)).result()
    assert result.finish_reason == "stop" and 0 < len(result.token_ids) < 100
    assert fast.tokenizer.eos_token_id not in result.token_ids


def test_ct2_without_the_package_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from langmarl.core.errors import MissingDependencyError
    from langmarl.llm.local import ct2

    monkeypatch.setattr(ct2, "ct2_available", lambda: False)
    with pytest.raises(MissingDependencyError, match=r"langmarl\[local\]"):
        ct2.load_ct2(tmp_path, threads=1)
    assert not any(tmp_path.iterdir())  # refused before converting anything


def test_engines_load_their_models_one_at_a_time() -> None:
    """Two engines starting together (two agents on two checkpoints) take turns loading:
    transformers' and peft's loaders patch process-wide state, and overlapping loads left
    parameters on the meta device."""
    import threading
    import time
    from types import SimpleNamespace

    from langmarl.llm.local.engine import LocalEngine

    inside, most = 0, 0
    guard = threading.Lock()

    def loader(_: object) -> tuple[object, object]:
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.2)
        with guard:
            inside -= 1
        model = SimpleNamespace(config=SimpleNamespace(max_position_embeddings=64))
        return model, SimpleNamespace(eos_token_id=0, pad_token_id=0)

    engines = [LocalEngine(loader=loader, threads=1) for _ in range(2)]
    starters = [threading.Thread(target=engine.start) for engine in engines]
    for thread in starters:
        thread.start()
    for thread in starters:
        thread.join()
    assert most == 1 and all(engine.model is not None for engine in engines)
    for engine in engines:
        engine.close()
