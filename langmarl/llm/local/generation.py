"""Batched generation for the embedded model, with per-request sampling settings.

Each row of a batch keeps its own temperature, top-p, token budget, stop strings and random
generator, so a request's seed gives the same text whichever requests share its batch.
Finished rows are dropped from the batch (and the KV cache) as soon as they end.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

TextCallback = Callable[[str], None]


@dataclass
class GenJob:
    """One prompt to complete.

    Attributes:
        prompt_ids: Token ids of the full chat prompt.
        max_new_tokens: Most tokens to generate.
        temperature: 0 is greedy decoding.
        top_p: Nucleus mass (1.0 keeps all tokens).
        seed: Seed of this row's generator (``None``: random).
        stop: Strings that end the completion (not included in the text).
        on_text: Called with each new piece of text as it is generated (streaming).
    """

    prompt_ids: list[int]
    max_new_tokens: int
    temperature: float = 0.2
    top_p: float = 0.9
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    on_text: TextCallback | None = None


@dataclass
class GenOutput:
    """The completion of one :class:`GenJob`."""

    text: str
    token_ids: list[int]
    finish_reason: str  # "stop" (EOS or a stop string) or "length"


def sample_next(
    logits: torch.Tensor,
    temperatures: list[float],
    top_ps: list[float],
    generators: list[torch.Generator],
) -> torch.Tensor:
    """Pick the next token of each row.

    Args:
        logits: ``[B, V]`` next-token logits.
        temperatures: Per row; 0 means greedy.
        top_ps: Per row nucleus mass in (0, 1].
        generators: Per row random generators.

    Returns:
        ``[B]`` token ids.
    """
    chosen = logits.argmax(dim=-1)
    for row, temperature in enumerate(temperatures):
        if temperature <= 0:
            continue
        probs = torch.softmax(logits[row].float() / temperature, dim=-1)
        sorted_probs, order = probs.sort(descending=True)
        if top_ps[row] < 1.0:
            outside = sorted_probs.cumsum(-1) - sorted_probs > top_ps[row]
            sorted_probs = sorted_probs.masked_fill(outside, 0.0)
        pick = torch.multinomial(sorted_probs, 1, generator=generators[row])
        chosen[row] = order[pick[0]]
    return chosen


def left_pad(prompts: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)``, both ``[B, L]``, prompts aligned to the right."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    return ids, mask


class _Row:
    """Decoding state of one job."""

    def __init__(self, job: GenJob, decode: Callable[[list[int]], str]) -> None:
        self.job = job
        self.decode = decode
        self.tokens: list[int] = []
        self.text = ""
        self.finish_reason = "length"
        self.done = job.max_new_tokens <= 0
        seed = job.seed if job.seed is not None else random.getrandbits(63)
        self.generator = torch.Generator().manual_seed(seed)

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

    def output(self) -> GenOutput:
        if self.finish_reason != "stop" or not self.job.stop:
            self.text = self.decode(self.tokens)
        return GenOutput(self.text, self.tokens, self.finish_reason)


@torch.inference_mode()
def generate_batch(model: Any, tokenizer: Any, jobs: list[GenJob]) -> list[GenOutput]:
    """Complete every job in one batched decoding loop with a shared KV cache."""
    eos_ids = {int(tokenizer.eos_token_id)}
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(eos_ids)

    def decode(tokens: list[int]) -> str:
        return str(tokenizer.decode(tokens, skip_special_tokens=True))

    rows = [_Row(job, decode) for job in jobs]
    active = [i for i, row in enumerate(rows) if not row.done]
    if not active:
        return [row.output() for row in rows]
    input_ids, mask = left_pad([jobs[i].prompt_ids for i in active], pad_id)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    out = model(
        input_ids=input_ids,
        attention_mask=mask,
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,
    )
    cache = out.past_key_values
    while True:
        picked = sample_next(
            out.logits[:, -1, :],
            [jobs[i].temperature for i in active],
            [jobs[i].top_p for i in active],
            [rows[i].generator for i in active],
        )
        for slot, index in enumerate(active):
            rows[index].push(int(picked[slot]), eos_ids)
        keep = [slot for slot, index in enumerate(active) if not rows[index].done]
        if not keep:
            break
        if len(keep) < len(active):
            keep_t = torch.tensor(keep, dtype=torch.long)
            cache.batch_select_indices(keep_t)
            picked, mask, positions = picked[keep_t], mask[keep_t], positions[keep_t]
            active = [active[slot] for slot in keep]
        mask = torch.cat([mask, torch.ones((len(active), 1), dtype=torch.long)], dim=1)
        positions = positions[:, -1:] + 1
        out = model(
            input_ids=picked[:, None],
            attention_mask=mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
        )
        cache = out.past_key_values
    return [row.output() for row in rows]
