"""Which engine runs the in-process model (issue 16).

::

    "ct2"           the embedded model as a CTranslate2 int8 copy (:mod:`ct2`; needs the
                    ``ctranslate2`` package from the ``local`` extra)
    "transformers"  the model as loaded: fp32 weights through transformers (the fallback,
                    and the only engine for models other than the embedded one)
    "int8"          torch dynamic int8 quantization of every ``nn.Linear``
    "bf16"          bfloat16 weights

Chosen by ``extra_params={"engine": ...}`` in the ``LLMConfig``, else ``$LANGMARL_LOCAL_ENGINE``,
else :data:`DEFAULT_ENGINE` (``"transformers"``). ``"ct2"`` serves only the embedded model
(other models fall back to ``"transformers"`` with a log line); without ``ctranslate2`` it
raises ``MissingDependencyError`` naming the ``local`` extra.

All engines keep the engine's contract (dynamic batching, per-request temperature / top-p /
top-k / seed, stop strings, token budgets, streaming): the torch ones run
:func:`langmarl.llm.local.generation.generate_rows` on a transformed model; ``"ct2"`` feeds the
same per-row state from CTranslate2 (see :mod:`langmarl.llm.local.ct2` for seeds).
``benchmarks/llm_local.py --backends`` measures them side by side with the greedy answers on
:data:`CHECK_SET`: int8 lost answers there (it answered "2+3" with "2.25") and bf16 was
slower than ct2 without being exact, so they stay for comparison only.
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

EngineKind = Literal["ct2", "transformers", "int8", "bf16"]
ENGINE_ENV_VAR = "LANGMARL_LOCAL_ENGINE"
ENGINE_PARAM = "engine"
"""The ``LLMConfig.extra_params`` key that names the engine."""
DEFAULT_ENGINE: EngineKind = "transformers"
"""The engine when none is named. Not ``"ct2"``, though it generated 2.0x / 2.2x the tokens/s at
1 / 8 concurrent requests and answers the check set: it misses the existing "2+3" test prompt
(``tests/llm/test_local_model.py``), which fp32 answers (benchmarks/RESULTS.md, issue 16)."""
ENGINES: tuple[EngineKind, ...] = get_args(EngineKind)

CHECK_SET: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is 2+3?", ("5", "five")),
    ("What is the capital of France?", ("Paris",)),
    ("How many days are there in a week?", ("7", "seven")),
    ("What is the opposite of hot?", ("cold",)),
    ("How many legs does a dog have?", ("4", "four")),
)
"""Questions whose greedy answer must contain one of its strings (case-insensitively) on every
engine: the quality bar a faster engine has to keep (the benchmark and the tests use it)."""


def passes_check(answer: str, accepted: tuple[str, ...]) -> bool:
    """Whether ``answer`` contains one of the ``accepted`` words (case-insensitively, as a
    whole word: "2.25" does not answer "5")."""
    return any(re.search(rf"(?<![\w.]){re.escape(a)}(?![\w]|\.\d)", answer, re.I) for a in accepted)


def resolve_engine(name: str | None, embedded: bool = True) -> EngineKind:
    """The engine ``name`` (or ``$LANGMARL_LOCAL_ENGINE``) selects.

    Args:
        name: An engine name, or ``None`` to use the environment variable or the default.
        embedded: Whether the model is the embedded SmolLM2 (``"ct2"`` serves no other).

    Raises:
        ConfigError: for an unknown name, listing the known ones.
    """
    from langmarl.core.validation import did_you_mean

    chosen = name or os.environ.get(ENGINE_ENV_VAR) or DEFAULT_ENGINE
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


def _as_loaded(model: Any) -> Any:
    return model


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

    The model is for inference only (int8 modules and CTranslate2 have no trainable
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
