"""Batched generation for the embedded model, with per-request sampling settings.

Each row of a batch keeps its own sampling rule (temperature, top-p, top-k), token budget,
stop strings and random generator, so a request's seed gives the same text whichever requests
share its batch. The sampler is :mod:`langmarl.llm.local.sampling` and the loop
:func:`langmarl.llm.local.decoding.decode_loop`, both shared with MAGRPO's rollouts; finished
rows are dropped from the batch (and the KV cache) as soon as they end.

A row that fails on its own (its sampling, its stop strings, its ``on_text`` callback) is
dropped the same way and gets its exception as its result, so one bad request never fails the
requests it happens to share a batch with. Only a failure of the model call itself, which all
rows share, ends the whole batch.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from langmarl.llm.local.decoding import decode_loop
from langmarl.llm.local.sampling import Sampling, sample_tokens

TextCallback = Callable[[str], None]

SEED_RANGE = (-(2**63), 2**64 - 1)
"""Seeds ``torch.Generator.manual_seed`` accepts."""


class JobCancelled(Exception):
    """Raise from a job's ``on_text`` to stop that job early (its reader has gone)."""


@dataclass
class GenJob:
    """One prompt to complete.

    Attributes:
        prompt_ids: Token ids of the full chat prompt.
        max_new_tokens: Most tokens to generate.
        temperature: 0 is greedy decoding.
        top_p: Nucleus mass (1.0 keeps all tokens).
        top_k: Keep only the k most likely tokens (``None``: all).
        seed: Seed of this row's generator (``None``: random).
        stop: Strings that end the completion (not included in the text).
        on_text: Called with each new piece of text as it is generated (streaming).
    """

    prompt_ids: list[int]
    max_new_tokens: int
    temperature: float = 0.2
    top_p: float = 0.9
    top_k: int | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    on_text: TextCallback | None = None

    @property
    def sampling(self) -> Sampling:
        """This job's sampling rule.

        Raises:
            ValueError: for a temperature, top-p or top-k out of range.
        """
        return Sampling(temperature=self.temperature, top_p=self.top_p, top_k=self.top_k)

    def __post_init__(self) -> None:
        """Refuse settings that would only fail later, inside a batch shared with others.

        Raises:
            ValueError: naming the field, its value and the accepted range.
        """
        if not self.prompt_ids:
            raise ValueError("prompt_ids must not be empty")
        Sampling(temperature=self.temperature, top_p=self.top_p, top_k=self.top_k)
        if self.max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be >= 0, got {self.max_new_tokens}")
        if self.seed is not None and not SEED_RANGE[0] <= self.seed <= SEED_RANGE[1]:
            raise ValueError(f"seed must be in [{SEED_RANGE[0]}, {SEED_RANGE[1]}], got {self.seed}")
        if any(not stop for stop in self.stop):
            raise ValueError("stop strings must not be empty (an empty one matches at once)")


@dataclass
class GenOutput:
    """The completion of one :class:`GenJob`."""

    text: str
    token_ids: list[int]
    finish_reason: str  # "stop" (EOS or a stop string) or "length"


def left_pad(prompts: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)``, both ``[B, L]``, prompts aligned to the right."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    return ids, mask


class Row:
    """Decoding state of one job; a row that raises keeps the error as its result."""

    def __init__(self, job: GenJob, decode: Callable[[list[int]], str]) -> None:
        self.job = job
        self.decode = decode
        self.tokens: list[int] = []
        self.text = ""
        self.finish_reason = "length"
        self.error: Exception | None = None
        self.done = job.max_new_tokens <= 0
        self.sampling = Sampling(greedy=True)
        seed = job.seed if job.seed is not None else random.getrandbits(63)
        self.generator = torch.Generator().manual_seed(seed)
        try:  # GenJob checked these, but a caller may have changed them since
            self.sampling = job.sampling
        except ValueError as exc:
            self.fail(exc)

    def fail(self, error: Exception) -> None:
        """End this row with ``error`` as its result."""
        self.error, self.done = error, True

    def sample(self, logits: torch.Tensor, greedy: int) -> int:
        """This row's next token from its ``[V]`` logits (``greedy`` at temperature 0)."""
        if self.sampling.is_greedy:
            return greedy
        return int(sample_tokens(logits[None], self.sampling, self.generator)[0])

    def push(self, token: int, eos_ids: set[int]) -> None:
        if token in eos_ids:
            self.done, self.finish_reason = True, "stop"
            return
        self.tokens.append(token)
        if self.job.on_text is not None or self.job.stop:
            self._update_text()
        if len(self.tokens) >= self.job.max_new_tokens:
            self.done = True

    def _update_text(self) -> None:
        text = self.decode(self.tokens)
        if text.endswith("\ufffd"):  # an incomplete multi-byte character: wait for more
            return
        for stop in self.job.stop:
            cut = text.find(stop)
            if cut >= 0:
                text, self.done, self.finish_reason = text[:cut], True, "stop"
        if self.job.on_text is not None and len(text) > len(self.text):
            self.job.on_text(text[len(self.text) :])
        self.text = text

    def result(self) -> GenOutput | Exception:
        if self.error is not None:
            return self.error
        try:
            if self.finish_reason != "stop" or not self.job.stop:
                self.text = self.decode(self.tokens)
        except Exception as exc:  # this row's result, not the batch's
            return exc
        return GenOutput(self.text, self.tokens, self.finish_reason)


def _advance(rows: list[Row], logits: torch.Tensor, eos_ids: set[int]) -> list[int]:
    """Sample and push the next token of each row; returns each row's token.

    Args:
        rows: The active rows, in batch order.
        logits: ``[B, V]`` next-token logits of those rows.
    """
    greedy = logits.argmax(dim=-1).tolist()
    picked = []
    for slot, row in enumerate(rows):
        token = greedy[slot]
        try:
            token = row.sample(logits[slot], token)
            row.push(token, eos_ids)
        except Exception as exc:  # only this request fails; its companions carry on
            row.fail(exc)
        picked.append(token)
    return picked


def generate_batch(model: Any, tokenizer: Any, jobs: list[GenJob]) -> list[GenOutput]:
    """Complete every job in one batched decoding loop with a shared KV cache.

    Raises:
        Exception: the first row's failure, if any row failed (see :func:`generate_rows` for
            per-row results).
    """
    results = generate_rows(model, tokenizer, jobs)
    for result in results:
        if isinstance(result, Exception):
            raise result
    return [r for r in results if isinstance(r, GenOutput)]


def generate_rows(model: Any, tokenizer: Any, jobs: list[GenJob]) -> list[GenOutput | Exception]:
    """Complete every job in one batched decoding loop with a shared KV cache.

    Returns:
        Per job, its output, or the exception that ended that job alone.

    Raises:
        Exception: whatever the model call raised (it fails every row at once).
    """
    eos_ids = {int(tokenizer.eos_token_id)}
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(eos_ids)

    def decode(tokens: list[int]) -> str:
        return str(tokenizer.decode(tokens, skip_special_tokens=True))

    rows = [Row(job, decode) for job in jobs]
    active = [row for row in rows if not row.done]
    if active:
        input_ids, mask = left_pad([row.job.prompt_ids for row in active], pad_id)

        def choose(
            step: int, logits: torch.Tensor, slots: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
            live = [active[slot] for slot in slots.tolist()]
            picked = _advance(live, logits, eos_ids)
            alive = [not row.done for row in live]
            return torch.tensor(picked, dtype=torch.long), torch.tensor(alive, dtype=torch.bool)

        steps = max(row.job.max_new_tokens for row in active)
        decode_loop(model, input_ids, mask, choose, steps)
    return [row.result() for row in rows]
