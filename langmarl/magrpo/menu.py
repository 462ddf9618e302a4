"""An agent that answers by choosing one of a few texts the task offers (a menu).

A small model asked to pick from a menu in words is at chance, but ranking the same options
by their likelihood it chooses well (DESIGN.md). A task whose answers are a handful of known
texts (the reference game's speaker: one word of the target) gives the agent a
:class:`MenuFormatter`, and the rollout then scores the options instead of decoding freely:

- Each option's log-probability is the sum of its tokens' log-probabilities after the
  prompt, under the model that samples (``log p(o)``).
- Sampling draws G options from ``softmax(log p(o) / temperature)`` over the menu, with
  replacement; greedy decoding (evaluation) takes the most likely option.
- The completion is the option's tokens: the update trains ``log p(o)``, the same quantity.
  Under the menu the policy is ``log p(o) - log Σ_o' p(o')``; the second term is the same
  for every sample of a prompt, and the group-relative advantages of those samples sum to
  zero, so its gradient cancels: the update of raw ``log p(o)`` is the menu policy's.
- ``top_p``, ``top_k`` and ``max_new_tokens`` do not apply; an option is tokenized on its
  own after the prompt (start it with a space where a word boundary is meant).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ConfigError
from langmarl.magrpo.generation import (
    GenerationBatch,
    completion_logprobs,
    encode_prompts,
    shared_prompt_logprobs,
)
from langmarl.magrpo.parallel import TOKENIZER_LOCK

if TYPE_CHECKING:
    import torch

    from langmarl.magrpo.config import TrainerConfig

Options = Callable[[Mapping[str, Any]], Sequence[str]]
"""Example → the texts the agent chooses from (at least one, none empty)."""


@dataclass(frozen=True)
class MenuFormatter:
    """A formatter whose agent chooses among ``options(example)`` instead of generating.

    Attributes:
        prompt: Example → prompt text (the formatter proper).
        options: Example → the texts to choose from.
    """

    prompt: Callable[[Mapping[str, Any]], str]
    options: Options

    def __call__(self, example: Mapping[str, Any]) -> str:
        return self.prompt(example)


def menu_of(formatter: Any) -> Options | None:
    """The formatter's options when it offers a menu, else ``None``."""
    return formatter.options if isinstance(formatter, MenuFormatter) else None


def option_scores(
    model: Any, tokenizer: Any, prompts: Sequence[str], menus: Sequence[Sequence[str]],
    config: TrainerConfig,
) -> list[torch.Tensor]:  # fmt: skip
    """``log p(option | prompt)`` of every option of every prompt, in one forward pass.

    Returns:
        Per prompt, a ``(K,)`` tensor over its menu's options, in their order.
    """
    import torch

    pairs = [(p, o) for p, menu in zip(prompts, menus, strict=True) for o in menu]
    device = next(model.parameters()).device
    batch = _sequences(tokenizer, [p for p, _ in pairs], [o for _, o in pairs], config, device)
    sizes = {len(menu) for menu in menus}
    with torch.inference_mode():
        if len(sizes) == 1:  # each prompt runs once, its cache shared by its options
            logprobs = shared_prompt_logprobs(model, batch.sequences, batch.attention_mask,
                                              batch.prompt_length, sizes.pop())  # fmt: skip
        else:
            logprobs = completion_logprobs(
                model, batch.sequences, batch.attention_mask, batch.prompt_length
            )
    totals = (logprobs * batch.completion_mask).sum(dim=1)
    return list(totals.split([len(menu) for menu in menus]))


def choose(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    menus: Sequence[Sequence[str]],
    num_generations: int,
    config: TrainerConfig,
    greedy: bool = False,
    generator: torch.Generator | None = None,
) -> GenerationBatch:
    """G options per prompt (row ``p * G + g``), drawn as the module docstring says; the
    batch holds them as completions, like :func:`~langmarl.magrpo.generation.generate`'s.

    Raises:
        ConfigError: if a menu is empty or holds an empty option.
    """
    import torch

    for menu in menus:
        if not menu or not all(option.strip() for option in menu):
            raise ConfigError(f"a menu must offer non-empty options, got {list(menu)!r}")
    scores = option_scores(model, tokenizer, prompts, menus, config)
    chosen: list[str] = []
    for menu, score in zip(menus, scores, strict=True):
        if greedy:
            picks = [int(score.argmax())] * num_generations
        else:
            weights = torch.softmax(score.float() / config.temperature, dim=0)
            picks = torch.multinomial(
                weights, num_generations, replacement=True, generator=generator
            ).tolist()
        chosen += [menu[k] for k in picks]
    repeated = [p for p in prompts for _ in range(num_generations)]
    return _sequences(tokenizer, repeated, chosen, config, next(model.parameters()).device)


def _sequences(
    tokenizer: Any, prompts: Sequence[str], options: Sequence[str], config: TrainerConfig,
    device: Any,
) -> GenerationBatch:  # fmt: skip
    """Left-padded prompts followed by right-padded options, as a generation batch."""
    import torch

    encoded = encode_prompts(tokenizer, prompts, config)
    with TOKENIZER_LOCK:
        option_ids = [tokenizer.encode(o, add_special_tokens=False) for o in options]
    width = max(len(ids) for ids in option_ids)
    pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
    completion = torch.tensor([ids + [pad] * (width - len(ids)) for ids in option_ids])
    mask = torch.tensor([[1.0] * len(ids) + [0.0] * (width - len(ids)) for ids in option_ids])
    sequences = torch.cat([encoded["input_ids"], completion], dim=1).to(device)
    attention = torch.cat([encoded["attention_mask"], mask.long()], dim=1).to(device)
    texts = [o.strip() for o in options]
    prompt_length = encoded["input_ids"].shape[1]
    return GenerationBatch(sequences, attention, prompt_length, mask.to(device), texts)
