"""The one batched decoding loop, shared by the embedded engine and MAGRPO rollouts.

    prefill the left-padded prompts once (only the last position goes through the LM head)
    repeat each prompt's KV cache ``repeat`` times (G completions of one prompt)
    for step in 0 .. max_steps - 1:
        tokens, alive = choose(step, logits of the active rows, their row indices)
        stop when no row is alive or the step budget is spent
        drop the rows that are not alive from the batch and the cache
        feed each live row's token back

What a token means is the caller's business, through ``choose``: the engine samples per
request, decodes text, matches stop strings and isolates a request's failure to its row;
MAGRPO samples the whole batch with one rule and records the exact token ids it trains on.
Only a failure of the model call, which every row shares, ends the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from langmarl.llm.local.kv_cache import cache_keyword, output_cache

Choose = Callable[[int, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""``choose(step, logits, active) -> (tokens, alive)``: ``logits`` ``(A, V)`` of the active
rows, ``active`` ``(A,)`` their row indices (row ``p * repeat + g``); ``tokens`` ``(A,)`` the
ids fed back, ``alive`` ``(A,)`` bool, False for rows that are finished."""


@torch.inference_mode()
def decode_loop(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    choose: Choose,
    max_steps: int,
    repeat: int = 1,
) -> None:
    """Run the decoding loop of the module docstring.

    Args:
        model: A Hugging Face causal LM whose cache supports ``batch_repeat_interleave`` and
            ``batch_select_indices``.
        input_ids: ``(P, L)`` left-padded prompt ids.
        attention_mask: ``(P, L)`` 1 for real prompt tokens.
        choose: Picks each active row's next token and says which rows go on.
        max_steps: Most calls of ``choose``.
        repeat: Rows per prompt (``P * repeat`` rows in all).

    Raises:
        Exception: whatever the model call raised.
    """
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    out = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,
    )
    cache, logits = output_cache(out), out.logits[:, -1, :]
    mask, last_position = attention_mask, positions[:, -1:]
    if repeat > 1:
        cache.batch_repeat_interleave(repeat)
        logits = logits.repeat_interleave(repeat, dim=0)
        mask = mask.repeat_interleave(repeat, dim=0)
        last_position = last_position.repeat_interleave(repeat, dim=0)
    active = torch.arange(mask.shape[0], device=mask.device)
    pass_cache = cache_keyword(model)
    for step in range(max_steps):
        picked, alive = choose(step, logits, active)
        if step == max_steps - 1 or not bool(alive.any()):
            break
        if not bool(alive.all()):
            keep = alive.nonzero().squeeze(-1)
            cache.batch_select_indices(keep)
            active, picked, mask = active[keep], picked[keep], mask[keep]
            last_position = last_position[keep]
        mask = torch.cat([mask, mask.new_ones((mask.shape[0], 1))], dim=1)
        last_position = last_position + 1
        out = model(
            input_ids=picked[:, None],
            attention_mask=mask,
            position_ids=last_position,
            **{pass_cache: cache},
            use_cache=True,
        )
        cache, logits = output_cache(out), out.logits[:, -1, :]
