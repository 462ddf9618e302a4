"""How likely a local model finds each of a few continuations of one text: the way to ask a
small model to choose (DESIGN.md: asked to pick from a numbered menu the embedded model was at
chance; ranking the same options by their mean token log-probability it got 11 of 12 right).

``option_logprobs(model, tokenizer, prefix, options)`` runs one forward pass over the prefix
followed by each option (right-padded, one batch) and returns each option's mean token
log-probability given the prefix. The prefix is plain text, not a chat: the measured setup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MAX_OPTIONS = 64
"""Options scored in one call at most."""


def encode_options(
    tokenizer: Any, prefix: str, options: Sequence[str]
) -> tuple[list[int], list[list[int]]]:
    """The prefix's token ids and each option's, the option tokenized as it follows the
    prefix (the prefix's last token is kept whole: options are tokenized on their own and
    should start with a space or a new line where a word boundary is meant).

    Raises:
        ValueError: for no options, too many, an empty one, or an empty prefix.
    """
    if not options or len(options) > MAX_OPTIONS:
        raise ValueError(f"give 1 to {MAX_OPTIONS} options, not {len(options)}")
    prefix_ids = tokenizer.encode(prefix, add_special_tokens=False)
    if not prefix_ids:
        raise ValueError("the prefix is empty: give the text the options continue")
    option_ids = [tokenizer.encode(option, add_special_tokens=False) for option in options]
    empty = [i for i, ids in enumerate(option_ids) if not ids]
    if empty:
        raise ValueError(f"option {empty[0]} is empty: every option needs a token")
    return prefix_ids, option_ids


def option_logprobs(model: Any, tokenizer: Any, prefix: str, options: Sequence[str]) -> list[float]:
    """Each option's mean token log-probability after ``prefix`` under ``model`` (a Hugging
    Face causal LM: the fp32, w16 or bf16 engine's model, not CTranslate2's).

    Raises:
        ValueError: as :func:`encode_options`, or when the texts exceed the model's context.
    """
    import torch

    prefix_ids, option_ids = encode_options(tokenizer, prefix, options)
    lengths = [len(prefix_ids) + len(ids) for ids in option_ids]
    context = int(getattr(model.config, "max_position_embeddings", 0) or 0)
    if context and max(lengths) > context:
        raise ValueError(f"prefix and option take {max(lengths)} tokens: more than the {context} "
                         "the model reads")  # fmt: skip
    width = max(lengths)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    rows = [prefix_ids + ids + [pad] * (width - len(prefix_ids) - len(ids)) for ids in option_ids]
    input_ids = torch.tensor(rows)
    attention = torch.tensor([[1] * n + [0] * (width - n) for n in lengths])
    with torch.inference_mode():
        logits = model(input_ids=input_ids, attention_mask=attention).logits.float()
    logprobs = torch.log_softmax(logits[:, :-1, :], dim=-1)  # position t predicts token t + 1
    scores = []
    for row, ids in enumerate(option_ids):
        start = len(prefix_ids) - 1
        positions = torch.arange(start, start + len(ids))
        picked = logprobs[row, positions, torch.tensor(ids)]
        scores.append(float(picked.mean()))
    return scores
