"""Batched sampling of completions and batched scoring of them under a policy.

Sampling goes through the embedded engine's sampler and decoding loop
(:mod:`langmarl.llm.local.sampling`, :mod:`langmarl.llm.local.decoding`), which MAGRPO drives
with one rule for the whole batch and the exact token ids kept for training.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langmarl.llm.local.kv_cache import cache_kwargs, output_cache
from langmarl.llm.local.sampling import Sampling, sample_tokens
from langmarl.magrpo.loss import completion_mask, token_logprobs
from langmarl.magrpo.parallel import TOKENIZER_LOCK

if TYPE_CHECKING:
    import torch

    from langmarl.magrpo.config import TrainerConfig


@dataclass
class GenerationBatch:
    """Completions sampled for a list of prompts, G per prompt (row ``p * G + g``).

    Attributes:
        sequences: ``(B, P + C)`` left-padded prompt ids followed by completion ids.
        attention_mask: ``(B, P + C)`` 1 for real prompt and completion tokens.
        prompt_length: P, the padded prompt width.
        completion_mask: ``(B, C)`` 1 for generated tokens up to and including the stop token.
        texts: Decoded completions (special tokens removed).
    """

    sequences: torch.Tensor
    attention_mask: torch.Tensor
    prompt_length: int
    completion_mask: torch.Tensor
    texts: list[str]

    @property
    def completion_ids(self) -> torch.Tensor:
        """``(B, C)`` generated ids (padding included)."""
        return self.sequences[:, self.prompt_length :]

    def __len__(self) -> int:
        return len(self.texts)


def stop_token_ids(tokenizer: Any, model: Any) -> list[int]:
    """Ids that end a completion: the tokenizer's EOS and the model's generation EOS ids."""
    ids: set[int] = set()
    for source in (tokenizer.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
        if isinstance(source, int):
            ids.add(source)
        elif isinstance(source, (list, tuple)):
            ids.update(int(i) for i in source)
    return sorted(ids)


def render_prompt(tokenizer: Any, text: str, use_chat_template: bool) -> str:
    """The prompt string fed to the model (chat template applied when asked and available)."""
    if use_chat_template and getattr(tokenizer, "chat_template", None):
        return str(
            tokenizer.apply_chat_template(
                [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
            )
        )
    return text


def generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    num_generations: int,
    config: TrainerConfig,
    greedy: bool = False,
    generator: torch.Generator | None = None,
) -> GenerationBatch:
    """Sample ``num_generations`` completions for every prompt in one ``generate`` call.

    Args:
        model: A Hugging Face causal LM (or peft model).
        tokenizer: Its tokenizer.
        prompts: Prompt texts (formatted, before the chat template).
        num_generations: G completions per prompt.
        config: Sampling settings (max_new_tokens, temperature, top_p, top_k, chat template).
        greedy: Decode greedily (evaluation).
        generator: Random source of the draws (``None``: torch's global one); agents sampling
            on parallel threads each need their own.
    """
    import torch

    device = next(model.parameters()).device
    encoded = encode_prompts(tokenizer, prompts, config)
    input_ids = encoded["input_ids"].repeat_interleave(num_generations, dim=0).to(device)
    prompt_mask = encoded["attention_mask"].repeat_interleave(num_generations, dim=0).to(device)
    stops = stop_token_ids(tokenizer, model)
    completion_ids = decode(
        model,
        encoded["input_ids"].to(device),
        encoded["attention_mask"].to(device),
        num_generations,
        config.max_new_tokens,
        stops,
        sampling_from(config, greedy),
        pad_id=int(tokenizer.pad_token_id),
        generator=generator,
    )
    sequences = torch.cat([input_ids, completion_ids], dim=1)
    prompt_length = input_ids.shape[1]
    mask = completion_mask(completion_ids, stops)
    with TOKENIZER_LOCK:
        texts = _decode(tokenizer, sequences[:, prompt_length:], mask)
    full_mask = torch.cat([prompt_mask, mask.long()], dim=1)
    return GenerationBatch(sequences, full_mask, prompt_length, mask, texts)


def encode_prompts(tokenizer: Any, prompts: Sequence[str], config: TrainerConfig) -> Any:
    """The rendered prompts' ids and attention mask, left-padded and left-truncated to
    ``max_prompt_tokens`` (a tokenizer's ``BatchEncoding`` of tensors)."""
    rendered = [render_prompt(tokenizer, p, config.use_chat_template) for p in prompts]
    with TOKENIZER_LOCK:
        tokenizer.padding_side, tokenizer.truncation_side = "left", "left"
        return tokenizer(
            rendered,
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=config.max_prompt_tokens,
            add_special_tokens=False,
        )


def sampling_from(config: TrainerConfig, greedy: bool = False) -> Sampling:
    """The rollout sampling rule of ``config`` (greedy for evaluation)."""
    return Sampling(greedy, config.temperature, config.top_p, config.top_k)


def decode(
    model: Any,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    num_generations: int,
    max_new_tokens: int,
    stop_ids: Sequence[int],
    sampling: Sampling,
    pad_id: int,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Sample ``num_generations`` continuations of each left-padded prompt.

    Runs the engine's decoding loop (:func:`~langmarl.llm.local.decoding.decode_loop`): each
    distinct prompt is prefilled once and its KV cache repeated G times; rows that hit a stop
    token leave the batch (and the cache) at once. Every row shares ``sampling`` and
    ``generator`` (``None``: torch's global random state).

    Returns:
        ``(B * G, C)`` completion ids (row ``p * G + g``), ``pad_id`` after the stop token.
    """
    import torch

    from langmarl.llm.local.decoding import decode_loop

    rows = input_ids.shape[0] * num_generations
    result = torch.full((rows, max_new_tokens), pad_id, dtype=torch.long, device=input_ids.device)
    stops = torch.tensor(list(stop_ids), dtype=torch.long, device=input_ids.device)
    width = 0

    def choose(
        step: int, logits: torch.Tensor, active: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal width
        picked = sample_tokens(logits, sampling, generator)
        result[active, step] = picked
        width = step + 1
        return picked, ~torch.isin(picked, stops)

    decode_loop(model, input_ids, attention_mask, choose, max_new_tokens, num_generations)
    return result[:, : max(width, 1)].clone()


def _decode(tokenizer: Any, completion_ids: torch.Tensor, mask: torch.Tensor) -> list[str]:
    """Decode the scored tokens of each completion, dropping special tokens."""
    lengths = mask.sum(dim=1).long().tolist()
    rows = completion_ids.tolist()
    return [
        tokenizer.decode(row[:n], skip_special_tokens=True).strip()
        for row, n in zip(rows, lengths, strict=True)
    ]


def completion_logprobs(
    model: Any, sequences: torch.Tensor, attention_mask: torch.Tensor, prompt_length: int
) -> torch.Tensor:
    """Log-probabilities of the completion tokens in one forward pass.

    Position ids follow the attention mask, so left padding does not shift positions (the same
    positions ``generate`` used).

    Args:
        model: The causal LM.
        sequences: ``(B, P + C)`` ids.
        attention_mask: ``(B, P + C)`` mask.
        prompt_length: P.

    Returns:
        ``(B, C)`` log-probabilities (padding positions hold junk; mask them). Only the
        completion positions go through the LM head (``logits_to_keep``).
    """
    import torch

    position_ids = (attention_mask.long().cumsum(dim=-1) - 1).clamp(min=0)
    completion_length = sequences.shape[1] - prompt_length
    logits = model(
        input_ids=sequences,
        attention_mask=attention_mask,
        position_ids=position_ids,
        logits_to_keep=completion_length + 1,
    ).logits
    predicting = logits[:, -(completion_length + 1) : -1, :]
    return token_logprobs(predicting, sequences[:, prompt_length:]).to(torch.float32)


def shared_prompt_logprobs(
    model: Any,
    sequences: torch.Tensor,
    attention_mask: torch.Tensor,
    prompt_length: int,
    group: int,
) -> torch.Tensor:
    """:func:`completion_logprobs` for rows whose prompts repeat in runs of ``group`` (the G
    completions of one tree node): each prompt goes through the model once, its KV cache is
    repeated G times and only the completions are run per row. Same values and gradients,
    about G times fewer FLOPs on the prompt part.

    Args:
        model: The causal LM.
        sequences: ``(B, P + C)`` ids, B a multiple of ``group``, rows ``p * group + g``.
        attention_mask: ``(B, P + C)`` mask.
        prompt_length: P.
        group: Rows per distinct prompt.

    Returns:
        ``(B, C)`` log-probabilities.
    """
    import torch

    prompt_mask = attention_mask[::group, :prompt_length]
    positions = (prompt_mask.long().cumsum(dim=-1) - 1).clamp(min=0)
    prefix = model(
        input_ids=sequences[::group, :prompt_length],
        attention_mask=prompt_mask,
        position_ids=positions,
        use_cache=True,
        logits_to_keep=1,
    )
    logits = prefix.logits[:, -1:, :].repeat_interleave(group, dim=0)
    completion = sequences[:, prompt_length:]
    width = completion.shape[1]
    if width > 1:
        cache = output_cache(prefix)
        cache.batch_repeat_interleave(group)
        offsets = torch.arange(1, width, device=sequences.device)
        following = model(
            input_ids=completion[:, :-1],
            attention_mask=attention_mask[:, :-1],
            position_ids=positions[:, -1:].repeat_interleave(group, dim=0) + offsets,
            **cache_kwargs(model, cache),
            use_cache=True,
        ).logits
        logits = torch.cat([logits, following], dim=1)
    return token_logprobs(logits, completion).to(torch.float32)
