"""Properties of the PARL terms and critical steps (hypothesis)."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from langmarl.rewards.critical_steps import critical_steps, pad_stages, serial_steps
from langmarl.rewards.parl import anneal_linear, finish_reward

steps = st.integers(min_value=-10_000, max_value=100_000)
stage = st.tuples(st.integers(0, 3), st.lists(st.integers(0, 5), max_size=6))


@settings(max_examples=50, deadline=None)
@given(steps, st.integers(1, 50_000), st.floats(-1, 1), st.floats(-1, 1))
def test_lambda_stays_between_its_ends(step: int, total: int, start: float, end: float) -> None:
    value = anneal_linear(start, end, step, total)
    assert min(start, end) - 1e-12 <= value <= max(start, end) + 1e-12
    if step <= 0:
        assert value == start
    if step >= total:
        assert abs(value - end) < 1e-12


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(stage, max_size=4), min_size=1, max_size=4))
def test_critical_path_is_bounded_by_serial_and_by_main_steps(episodes: list) -> None:
    main, sub = pad_stages(episodes)
    critical, serial = critical_steps(main, sub), serial_steps(main, sub)
    assert torch.all(critical <= serial)
    assert torch.all(critical >= main.sum(dim=1))
    for b, stages in enumerate(episodes):
        assert critical[b].item() == sum(m + max(s, default=0) for m, s in stages)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=8))
def test_finish_reward_is_a_rate(pairs: list[tuple[int, int]]) -> None:
    completed = torch.tensor([float(c) for c, _ in pairs])
    assigned = torch.tensor([float(a) for _, a in pairs])
    rate = finish_reward(completed, assigned)
    assert torch.all((rate >= 0) & (rate <= 1))
    assert torch.all(rate[assigned == 0] == 0)
