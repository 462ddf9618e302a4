"""The shared sampler: one rule for a batch, per-row rules and generators, the nucleus."""

from __future__ import annotations

import pytest
import torch

from langmarl.llm.local.sampling import Sampling, nucleus, sample_rows, sample_tokens


def test_sample_tokens_top_k_one_is_greedy_and_top_p_keeps_the_head():
    torch.manual_seed(0)
    logits = torch.tensor([[0.0, 5.0, 1.0], [3.0, 0.0, 0.0]])
    for _ in range(20):
        assert sample_tokens(logits, Sampling(top_k=1)).tolist() == [1, 0]
        assert sample_tokens(logits, Sampling(top_p=0.5)).tolist() == [1, 0]
    assert sample_tokens(logits, Sampling(greedy=True)).tolist() == [1, 0]


def test_nucleus_from_the_head_matches_the_full_sort_distribution():
    torch.manual_seed(0)
    probs = torch.tensor([[0.5, 0.3, 0.15, 0.05]])
    head = [int(nucleus(probs, 0.7, heads=(2,))) for _ in range(2000)]
    full = [int(nucleus(probs, 0.7, heads=())) for _ in range(2000)]
    assert set(head) == set(full) == {0, 1}  # 0.5 + 0.3 reaches 0.7: the nucleus is {0, 1}
    assert abs(head.count(0) / 2000 - full.count(0) / 2000) < 0.05
    flat = torch.full((1, 8), 1 / 8)
    assert len({int(nucleus(flat, 0.9, heads=(2,))) for _ in range(300)}) > 2  # falls back


def test_a_generator_makes_the_draw_repeatable() -> None:
    logits = torch.zeros((2, 1000))
    rule = Sampling(temperature=0.7, top_p=0.9, top_k=500)
    first = sample_tokens(logits, rule, torch.Generator().manual_seed(3)).tolist()
    assert sample_tokens(logits, rule, torch.Generator().manual_seed(3)).tolist() == first


def test_tiny_temperature_is_greedy_without_nan() -> None:
    logits = torch.tensor([[0.0, 2.0, 1.0]])
    rule = Sampling(temperature=1e-300)
    assert rule.is_greedy
    assert sample_rows(logits, [rule], [torch.Generator()]).tolist() == [1]
    assert sample_tokens(logits, Sampling(temperature=1e-30)).tolist() == [1]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"temperature": float("nan")}, "temperature"),
        ({"temperature": -0.5}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_k": 0}, "top_k"),
    ],
)
def test_rules_out_of_range_are_refused(fields: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Sampling(**fields)  # type: ignore[arg-type]
