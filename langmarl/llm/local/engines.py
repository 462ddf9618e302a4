"""Which engine runs the in-process model (issues 16 and 25).

::

    "ct2"           the embedded model as a CTranslate2 int8 copy (:mod:`ct2`; needs the
                    ``ctranslate2`` package from the ``local`` extra)
    "transformers"  the model as loaded: fp32 weights through transformers (the fallback,
                    and the default for models other than the embedded one)
    "w16"           fp16 weights, fp32 activations: every ``nn.Linear`` an fbgemm fp16
                    layer (:mod:`weight_only`; x86 torch builds)
    "w8"            per-channel int8 weights, activations through bf16 (:mod:`weight_only`)
    "int8"          torch dynamic int8 quantization of every ``nn.Linear``
    "bf16"          bfloat16 weights

Chosen by ``extra_params={"engine": ...}`` in the ``LLMConfig``, else ``$LANGMARL_LOCAL_ENGINE``,
else :data:`DEFAULT_ENGINE` for the embedded model and ``"transformers"`` for any other.
``"ct2"`` serves only the embedded model (other models fall back to ``"transformers"`` with a
log line); without ``ctranslate2`` it raises ``MissingDependencyError`` naming the ``local``
extra.

All engines keep the engine's contract (dynamic batching, per-request temperature / top-p /
top-k / seed, stop strings, token budgets, streaming): the torch ones run
:func:`langmarl.llm.local.generation.generate_rows` on a transformed model; ``"ct2"`` feeds the
same per-row state from CTranslate2 (see :mod:`langmarl.llm.local.ct2` for seeds).
``benchmarks/llm_local.py --backends`` measures them side by side with the greedy answers on
:data:`CHECK_SET` and their :func:`agreement` with fp32's: int8 lost answers there (it
answered "2+3" with "2.25"), bf16 was slower than ct2 without being exact, and w8 lost two
answers ("4 + 4 = 12"), so they stay for comparison only.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, cast, get_args

from langmarl.core.errors import ConfigError
from langmarl.llm.local.generation import GenJob, GenOutput, generate_rows

log = logging.getLogger(__name__)

EngineKind = Literal["ct2", "transformers", "w16", "w8", "int8", "bf16"]
ENGINE_ENV_VAR = "LANGMARL_LOCAL_ENGINE"
ENGINE_PARAM = "engine"
"""The ``LLMConfig.extra_params`` key that names the engine."""
DEFAULT_ENGINE: EngineKind = "w16"
"""The engine of the embedded model when none is named (benchmarks/RESULTS.md, issues 16, 25).

``"w16"`` gives fp32's greedy answers token for token (25 of 25 check-set questions, and the
"2+3" test prompt) at 2.66x fp32's tokens/s for one request and 1.96x for eight concurrent ones
(2 threads, quiet machine; issue 25 asked for 2x at both: the eight-request case is held back by
costs both engines share, the KV cache's growth and per-layer Python). Seeded *sampled* text
differs from fp32's on some prompts (13 of 20 alike): a seed reproduces its text on the same
engine, not across engines. Where torch has no fbgemm, :func:`_default_engine` falls back to
fp32; other models stay fp32 unless an engine is named.
Not ``"ct2"``: 2.0x-2.2x in issue 16 (2.13x / 1.60x in issue 25's run), but it misses 4 of the
25 questions and the "2+3" test prompt (``tests/llm/test_local_model.py``) that fp32 answers."""
ENGINES: tuple[EngineKind, ...] = get_args(EngineKind)

CHECK_SET: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is 2+3?", ("5", "five")),
    ("What is the capital of France?", ("Paris",)),
    ("How many days are there in a week?", ("7", "seven")),
    ("What is the opposite of hot?", ("cold",)),
    ("How many legs does a dog have?", ("4", "four")),
    ("What is 3 times 3?", ("9", "nine")),
    ("What is 4+4?", ("8", "eight")),
    ("What is 1+1?", ("2", "two")),
    ("How many months are there in a year?", ("12", "twelve")),
    ("How many hours are in a day?", ("24",)),
    ("How many sides does a triangle have?", ("3", "three")),
    ("What is the capital of Japan?", ("Tokyo",)),
    ("What is the capital of Germany?", ("Berlin",)),
    ("What is the capital of Russia?", ("Moscow",)),
    ("What is the capital of Egypt?", ("Cairo",)),
    ("What is the capital of China?", ("Beijing",)),
    ("What is the chemical symbol for water?", ("H2O",)),
    ("What is the opposite of up?", ("down",)),
    ("What is the opposite of big?", ("small",)),
    ("What is the opposite of day?", ("night",)),
    ("What is the opposite of wet?", ("dry",)),
    ("What is the largest ocean on Earth?", ("Pacific",)),
    ("Which planet is known as the Red Planet?", ("Mars",)),
    ("How many seconds are in a minute?", ("60", "sixty")),
    ("Who wrote Romeo and Juliet?", ("Shakespeare",)),
)
"""Questions whose greedy answer (32 tokens) must contain one of its strings
(case-insensitively) on every engine: the quality bar a faster engine has to keep (the
benchmark and the tests use it). fp32 answers all 25; they were picked from 55 candidates as
the ones it gets right, so a miss is the engine's, not the model's."""


def passes_check(answer: str, accepted: tuple[str, ...]) -> bool:
    """Whether ``answer`` contains one of the ``accepted`` words (case-insensitively, as a
    whole word: "2.25" does not answer "5")."""
    return any(re.search(rf"(?<![\w.]){re.escape(a)}(?![\w]|\.\d)", answer, re.I) for a in accepted)


def agreement(tokens: list[list[int]], reference: list[list[int]]) -> tuple[int, float]:
    """How closely greedy answers follow the reference engine's, prompt by prompt.

    Args:
        tokens: Each prompt's generated token ids on the engine under test.
        reference: The same prompts' token ids on the reference engine (fp32).

    Returns:
        ``(same, share)``: how many answers are identical, and the share of the reference's
        tokens reproduced before each answer's first difference (tokens after it follow a
        different text, so they do not count even where they happen to match).
    """
    if len(tokens) != len(reference):
        raise ValueError(f"{len(tokens)} answers against {len(reference)} reference answers")
    same = sum(ours == theirs for ours, theirs in zip(tokens, reference, strict=True))
    kept = 0
    for ours, theirs in zip(tokens, reference, strict=True):
        kept += next(
            (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
            min(len(ours), len(theirs)),
        )
    total = sum(len(theirs) for theirs in reference)
    return same, kept / total if total else 1.0


def resolve_engine(name: str | None, embedded: bool = True) -> EngineKind:
    """The engine ``name`` (or ``$LANGMARL_LOCAL_ENGINE``) selects.

    Args:
        name: An engine name, or ``None`` to use the environment variable or the default.
        embedded: Whether the model is the embedded SmolLM2 (``"ct2"`` serves no other, and
            :data:`DEFAULT_ENGINE` is its default only).

    Raises:
        ConfigError: for an unknown name, listing the known ones.
    """
    from langmarl.core.validation import did_you_mean

    chosen = name or os.environ.get(ENGINE_ENV_VAR)
    if not chosen:
        return _default_engine(embedded)
    if chosen not in ENGINES:
        source = f"extra_params[{ENGINE_PARAM!r}]" if name else f"${ENGINE_ENV_VAR}"
        raise ConfigError(
            f"{source} is {chosen!r}, not a local engine.{did_you_mean(chosen, ENGINES)} "
            f"Known engines: {', '.join(ENGINES)}"
        )
    if chosen == "ct2" and not embedded:
        log.info("local engine: ct2 serves only the embedded model; using transformers")
        return "transformers"
    return cast(EngineKind, chosen)


def _default_engine(embedded: bool) -> EngineKind:
    """:data:`DEFAULT_ENGINE` for the embedded model, where this torch can run it; else fp32.

    Other models keep their fp32 weights unless an engine is named: the check set measured
    the faster engines' answers on the embedded model only.
    """
    if not embedded:
        return "transformers"
    if DEFAULT_ENGINE == "w16" and not _fp16_runnable():  # fbgemm: x86 torch builds only
        log.warning(
            "local engine: this torch cannot run the default engine %r; using transformers",
            DEFAULT_ENGINE,
        )
        return "transformers"
    return DEFAULT_ENGINE


def _fp16_runnable() -> bool:
    from langmarl.llm.local.weight_only import fp16_kernel_available

    return fp16_kernel_available()


def _as_loaded(model: Any) -> Any:
    return model


def _fp16_weights(model: Any) -> Any:
    from langmarl.llm.local.weight_only import to_fp16_weights

    return to_fp16_weights(model)


def _int8_weights(model: Any) -> Any:
    from langmarl.llm.local.weight_only import to_int8_weights

    return to_int8_weights(model)


def _int8(model: Any) -> Any:
    import torch

    with warnings.catch_warnings():  # torch >= 2.10 points eager quantization at torchao
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, torch.qint8)


def _bf16(model: Any) -> Any:
    import torch

    return model.to(torch.bfloat16)


_PREPARE: dict[EngineKind, Callable[[Any], Any]] = {
    "transformers": _as_loaded,  # "ct2" loads its own copy (load_engine)
    "w16": _fp16_weights,
    "w8": _int8_weights,
    "int8": _int8,
    "bf16": _bf16,
}


Generate = Callable[[list[GenJob]], list[GenOutput | Exception]]
"""``generate(jobs)``: each job's output or its own failure (``generation.generate_rows``)."""


def load_engine(
    kind: EngineKind,
    loader: Callable[[Any], tuple[Any, Any]] | None,
    cache_dir: str | Path | None,
    threads: int,
) -> tuple[Any, Any, Generate]:
    """``(model, tokenizer, generate)`` of engine ``kind``.

    The model is for inference only (int8 and fp16 modules and CTranslate2 have no trainable
    weights): training loads its own fp32 model (``langmarl.magrpo.policy``) and never
    shares the engine's.

    Args:
        kind: The engine.
        loader: Loads the fp32 ``(model, tokenizer)`` (``None``: the embedded model).
        cache_dir: Where converted weights are cached.
        threads: Intra-op threads (torch's are set by the caller's thread).

    Raises:
        MissingDependencyError: for ``"ct2"`` without ``ctranslate2``.
    """
    if kind == "ct2":
        from langmarl.llm.local.ct2 import load_ct2

        ct2_model, tokenizer = load_ct2(cache_dir, threads)
        return ct2_model, tokenizer, functools.partial(ct2_model.generate_rows, tokenizer)
    from langmarl.llm.local.weights import load_model

    model, tokenizer = (loader or load_model)(cache_dir)
    model = _PREPARE[kind](model)
    return model, tokenizer, functools.partial(generate_rows, model, tokenizer)
