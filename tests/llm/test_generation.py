"""Per-row sampling and padding for the embedded model's batched generation (no model needed)."""

from __future__ import annotations

import torch

from langmarl.llm.local.generation import left_pad
from langmarl.llm.local.sampling import Sampling, sample_rows


def sample_next(
    logits: torch.Tensor,
    temperatures: list[float],
    top_ps: list[float],
    generators: list[torch.Generator],
) -> torch.Tensor:
    rules = [Sampling(temperature=t, top_p=p) for t, p in zip(temperatures, top_ps, strict=True)]
    return sample_rows(logits, rules, generators)


def gens(n: int, seed: int = 0) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(seed + i) for i in range(n)]


def test_zero_temperature_is_greedy() -> None:
    logits = torch.tensor([[0.1, 3.0, 0.2], [5.0, 0.0, 0.0]])
    picked = sample_next(logits, [0.0, 0.0], [1.0, 1.0], gens(2))
    assert picked.tolist() == [1, 0]


def test_tiny_top_p_keeps_only_the_most_likely_token() -> None:
    logits = torch.tensor([[1.0, 1.5, 0.5, 1.4]])
    for seed in range(20):
        assert sample_next(logits, [1.0], [1e-6], gens(1, seed)).item() == 1


def test_same_seed_same_sample_different_seed_varies() -> None:
    logits = torch.zeros((1, 1000))
    first = [sample_next(logits, [1.0], [1.0], gens(1, 7)).item() for _ in range(3)]
    assert len(set(first)) == 1
    others = {sample_next(logits, [1.0], [1.0], gens(1, s)).item() for s in range(10)}
    assert len(others) > 1


def test_rows_sample_independently_of_their_batch_companions() -> None:
    logits = torch.randn((3, 50), generator=torch.Generator().manual_seed(1))
    alone = sample_next(logits[1:2], [0.9], [0.95], gens(1, 5)).item()
    batch = sample_next(
        logits, [0.0, 0.9, 1.3], [1.0, 0.95, 0.5], [gens(1, 9)[0], gens(1, 5)[0], gens(1, 3)[0]]
    )
    assert batch[1].item() == alone


def test_left_pad_aligns_prompts_right() -> None:
    ids, mask = left_pad([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]]
    assert mask.tolist() == [[1, 1, 1], [0, 0, 1]]
