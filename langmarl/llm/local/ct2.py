"""The ``"ct2"`` engine: the embedded model as a CTranslate2 int8 copy (issue 16).

The copy is converted once from the cached safetensors copy (``weights.py``) into
``<cache>/models/SmolLM2-135M-Instruct-ct2-int8``, staged in a temp directory and renamed into
place like the safetensors copy. CTranslate2 generates a batch in one call and takes its
sampling settings per call, so :meth:`Ct2Model.generate_rows` keeps the engine's contract by:

- grouping a batch's requests by sampling rule (all greedy requests together; sampled ones by
  temperature, top-p, top-k) and running one ``generate_batch`` per group;
- feeding each generated token to the same per-row state as the transformers path
  (``generation.Row``: token budget, EOS, stop strings, streaming ``on_text``, per-row
  failures) through CTranslate2's step callback, which also ends a row early;
- running *seeded* sampled requests on the fp32 transformers model (loaded on first need)
  instead: CTranslate2's ``set_random_seed`` seeds only the random generators its worker
  threads have not created yet, so a seed could not be honoured. A seeded request therefore
  gives the same text as on the ``"transformers"`` engine, whichever requests share its batch.
  Unseeded sampled requests use CTranslate2's own random state; greedy ones are deterministic.

CTranslate2 applies temperature, then top-k, then top-p, like :mod:`sampling`; int8 numerics
differ slightly from fp32 (``tests/llm/test_local_engines.py`` bounds the difference).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langmarl.core.errors import MissingDependencyError
from langmarl.llm.local.generation import GenJob, GenOutput, Row, generate_rows
from langmarl.llm.local.weights import MODEL_NAME, cache_root, convert_once, ensure_converted

log = logging.getLogger(__name__)

CT2_SUFFIX = "-ct2-int8"


def ct2_available() -> bool:
    """Whether the ``ctranslate2`` package can be imported."""
    import importlib.util

    return importlib.util.find_spec("ctranslate2") is not None


def ct2_dir(root: str | Path | None = None) -> Path:
    """Directory of the CTranslate2 copy (may not exist yet)."""
    return cache_root(root) / "models" / f"{MODEL_NAME}{CT2_SUFFIX}"


def _plain_source(source: Path, into: Path) -> Path:
    """``source`` seen without its config's ``quantization_config`` (the safetensors copy
    still names its GGUF origin there, which the converter refuses): links to its files."""
    into.mkdir()
    for entry in source.iterdir():
        if entry.name != "config.json":
            os.symlink(entry, into / entry.name)
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    config.pop("quantization_config", None)
    (into / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return into


def ensure_ct2(root: str | Path | None = None) -> Path:
    """Return the CTranslate2 int8 directory, converting on first use (~10 s).

    Raises:
        MissingDependencyError: if ``ctranslate2`` is not installed.
    """
    target = ct2_dir(root)
    complete = (target / "model.bin").is_file
    if complete():
        return target
    try:
        from ctranslate2.converters import TransformersConverter
    except ImportError:
        raise MissingDependencyError("ctranslate2", "local", "The ct2 local engine") from None
    source = ensure_converted(root)

    def convert(into: Path) -> None:
        plain = _plain_source(source, into.parent / "source")
        TransformersConverter(str(plain)).convert(str(into), quantization="int8")

    return convert_once(target, complete, convert, f"{MODEL_NAME} to CTranslate2 int8")


def _group_key(row: Row) -> tuple[float, float, int]:
    """CTranslate2's ``(temperature, top_p, top_k)`` for ``row`` (top-k 1 is greedy)."""
    if row.sampling.is_greedy:
        return (1.0, 1.0, 1)
    sampling = row.sampling
    return (sampling.temperature, sampling.top_p, sampling.top_k or 0)


class Ct2Model:
    """The embedded model on CTranslate2, with the fp32 model behind it for seeded requests.

    Args:
        directory: The converted copy (:func:`ensure_ct2`).
        config: The Hugging Face config (the engine reads the context length from it).
        threads: CTranslate2's intra-op threads.
        fallback: Loads the fp32 transformers model (called once, on the first seeded
            sampled request).
    """

    def __init__(
        self, directory: Path, config: Any, threads: int, fallback: Callable[[], Any]
    ) -> None:
        import ctranslate2

        self.config = config
        self.generator: Any = ctranslate2.Generator(
            str(directory), device="cpu", compute_type="int8", intra_threads=threads
        )
        # A generator still alive when the interpreter finalizes aborts the process (exit
        # code 134, "terminate called without an active exception"): drop it first.
        atexit.register(self.unload)
        self._fallback = fallback
        self._fallback_model: Any = None

    def unload(self) -> None:
        """Free the CTranslate2 model (the object cannot generate afterwards)."""
        self.generator = None

    def generate_rows(self, tokenizer: Any, jobs: list[GenJob]) -> list[GenOutput | Exception]:
        """Complete ``jobs``, as :func:`langmarl.llm.local.generation.generate_rows` does.

        Raises:
            Exception: whatever a CTranslate2 call raised (it fails every row at once).
        """

        def decode(tokens: list[int]) -> str:
            return str(tokenizer.decode(tokens, skip_special_tokens=True))

        rows = [Row(job, decode) for job in jobs]
        seeded = [
            i
            for i, row in enumerate(rows)
            if not row.done and not row.sampling.is_greedy and row.job.seed is not None
        ]
        groups: dict[tuple[float, float, int], list[Row]] = {}
        for i, row in enumerate(rows):
            if not row.done and i not in seeded:
                groups.setdefault(_group_key(row), []).append(row)
        eos_ids = {int(tokenizer.eos_token_id)}
        for key, group in groups.items():
            self._generate_group(tokenizer, group, key, eos_ids)
        results = [row.result() for row in rows]
        if seeded:
            if self._fallback_model is None:
                self._fallback_model = self._fallback()
            exact = generate_rows(self._fallback_model, tokenizer, [jobs[i] for i in seeded])
            for i, result in zip(seeded, exact, strict=True):
                results[i] = result
        return results

    def _generate_group(
        self, tokenizer: Any, group: list[Row], key: tuple[float, float, int], eos: set[int]
    ) -> None:
        """One ``generate_batch`` call for rows sharing a sampling rule."""

        def step(result: Any) -> bool:  # True ends this row
            row = group[result.batch_id]
            if not row.done:
                try:
                    row.push(int(result.token_id), eos)
                except Exception as exc:  # only this request fails
                    row.fail(exc)
            return row.done

        temperature, top_p, top_k = key
        self.generator.generate_batch(
            [tokenizer.convert_ids_to_tokens(row.job.prompt_ids) for row in group],
            max_length=max(row.job.max_new_tokens for row in group),
            include_prompt_in_result=False,
            return_end_token=True,
            end_token=sorted(eos),
            sampling_temperature=temperature,
            sampling_topp=top_p,
            sampling_topk=top_k,
            callback=step,
        )


def load_ct2(root: str | Path | None, threads: int) -> tuple[Ct2Model, Any]:
    """``(model, tokenizer)`` of the embedded model on CTranslate2, converting on first use.

    Raises:
        MissingDependencyError: if ``ctranslate2`` is not installed.
    """
    from transformers import AutoConfig, AutoTokenizer

    from langmarl.llm.local.weights import load_model

    if not ct2_available():
        raise MissingDependencyError("ctranslate2", "local", "The ct2 local engine")
    directory = ensure_ct2(root)
    source = ensure_converted(root)
    model = Ct2Model(
        directory, AutoConfig.from_pretrained(source), threads, lambda: load_model(root)[0]
    )
    return model, AutoTokenizer.from_pretrained(source)
