"""CriticalStepsMetric and the pure critical/serial step functions."""

from __future__ import annotations

import pytest
import torch

from langmarl.rewards import CriticalStepsMetric, pad_stages
from langmarl.rewards.critical_steps import critical_steps, serial_steps
from langmarl.rewards.parl import RewardInputError


def test_critical_path_takes_the_slowest_subagent_per_stage() -> None:
    main = torch.tensor([[1.0, 1.0]])
    sub = torch.tensor([[[2.0, 5.0, 1.0], [3.0, 0.0, 0.0]]])
    assert CriticalStepsMetric()(main, sub).tolist() == [1 + 5 + 1 + 3]
    assert serial_steps(main, sub).tolist() == [2 + 8 + 3]


def test_reference_serial_vs_parallel_example() -> None:
    metric = CriticalStepsMetric()
    main = torch.tensor([[0.1, 0.1, 0.1]])
    sub = torch.ones(1, 3, 10)
    assert metric(main, sub).item() == pytest.approx(3.3)
    assert metric.serial(main, sub).item() == pytest.approx(30.3)
    assert metric.orchestration_overhead == 0.1


def test_stages_without_subagents_cost_their_main_steps() -> None:
    assert critical_steps(torch.tensor([[1.0, 2.0]]), torch.zeros(1, 2, 0)).tolist() == [3.0]
    main, sub = pad_stages([[(1, [2, 3]), (1, [])], [(1, [])]])
    assert main.tolist() == [[1.0, 1.0], [1.0, 0.0]]
    assert sub.shape == (2, 2, 2)
    assert critical_steps(main, sub).tolist() == [5.0, 1.0]
    assert serial_steps(main, sub).tolist() == [7.0, 1.0]


def test_bad_shapes_and_negative_steps_are_rejected() -> None:
    with pytest.raises(RewardInputError, match="pad stages"):
        critical_steps(torch.ones(2, 3), torch.ones(2, 4, 1))
    with pytest.raises(RewardInputError, match="non-negative"):
        critical_steps(torch.ones(1, 1), -torch.ones(1, 1, 1))


def test_metric_is_differentiable() -> None:
    sub = torch.tensor([[[1.0, 3.0]]], requires_grad=True)
    CriticalStepsMetric()(torch.ones(1, 1), sub).sum().backward()
    assert sub.grad is not None and sub.grad.tolist() == [[[0.0, 1.0]]]
