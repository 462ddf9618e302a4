"""PARLReward: the reference examples, edge cases and gradient flow."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from langmarl.core.errors import ConfigError
from langmarl.rewards import PARLReward
from langmarl.rewards.parl import RewardInputError, anneal_linear, finish_reward


def test_lambda_anneals_as_in_the_reference() -> None:
    fn = PARLReward(lambda_init=0.1, lambda_final=0.0, total_training_steps=10000)
    values = [fn.anneal_lambda(step).item() for step in (0, 5000, 10000)]
    assert values == pytest.approx([0.1, 0.05, 0.0])
    assert fn.anneal_lambda(0).shape == ()
    assert fn.lambda_init == fn.lambda1_init == fn.lambda2_init == 0.1


def test_lambda1_and_lambda2_anneal_separately() -> None:
    fn = PARLReward(lambda1_init=0.2, lambda1_final=0.1, lambda2_init=0.4, total_training_steps=10)
    assert fn.anneal_lambda1(5).item() == pytest.approx(0.15)
    assert fn.anneal_lambda2(5).item() == pytest.approx(0.2)


def test_progress_is_clamped_at_both_ends() -> None:
    fn = PARLReward(total_training_steps=100)
    assert fn.anneal_lambda1(-50).item() == pytest.approx(0.1)
    assert fn.anneal_lambda1(1_000).item() == pytest.approx(0.0)


@pytest.mark.parametrize("total", [0, -1, 0.0])
def test_total_training_steps_must_be_positive(total: int) -> None:
    with pytest.raises(ConfigError, match="total_training_steps must be > 0"):
        PARLReward(total_training_steps=total)


def test_anneal_linear_is_pure() -> None:
    assert anneal_linear(1.0, 0.0, 25, 100) == pytest.approx(0.75)


def test_instantiation_reward_reference_example() -> None:
    fn = PARLReward()
    got = fn.compute_instantiation_reward(torch.tensor([10, 25, 50, 100]), max_subagents=100)
    assert got.tolist() == pytest.approx([0.1, 0.25, 0.5, 1.0])
    assert got.dtype == torch.get_default_dtype()


def test_instantiation_reward_caps_and_rejects_negatives() -> None:
    fn = PARLReward()
    assert fn.compute_instantiation_reward([150], max_subagents=100).tolist() == [1.0]
    with pytest.raises(RewardInputError, match="non-negative"):
        fn.compute_instantiation_reward([-1])
    with pytest.raises(RewardInputError, match="max_subagents"):
        fn.compute_instantiation_reward([1], max_subagents=0)


def test_finish_reward_and_zero_assigned() -> None:
    fn = PARLReward()
    got = fn.compute_finish_reward(torch.tensor([2, 3, 0, 5]), torch.tensor([4, 3, 0, 4]))
    assert got.tolist() == pytest.approx([0.5, 1.0, 0.0, 1.0])
    vacuous = PARLReward(finish_when_none_assigned=1.0)
    assert vacuous.compute_finish_reward([0], [0]).tolist() == [1.0]
    assert not torch.isnan(finish_reward(torch.zeros(1), torch.zeros(1))).any()


def test_task_quality_reference_example() -> None:
    features = torch.tensor([[0.8, 0.9, 0.7], [0.3, 0.2, 0.4], [0.6, 0.7, 0.5]])
    got = PARLReward().compute_task_quality(features, torch.tensor([1.0, 0.0, 1.0]))
    assert got.tolist() == pytest.approx([0.8, 0.0, 0.6])


def test_task_quality_rejects_bad_shapes() -> None:
    fn = PARLReward()
    with pytest.raises(RewardInputError, match="feature_dim"):
        fn.compute_task_quality(torch.zeros(2, 0), torch.ones(2))
    with pytest.raises(RewardInputError, match="one row per episode"):
        fn.compute_task_quality(torch.zeros(2, 3), torch.ones(3))


def test_forward_at_step_5000_matches_the_formula() -> None:
    fn = PARLReward(lambda_init=0.1, lambda_final=0.0, total_training_steps=10000)
    got = fn(
        r_parallel=torch.tensor([0.5, 0.3, 0.8]),
        r_finish=torch.tensor([0.9, 0.8, 0.7]),
        r_perf=torch.tensor([0.9, 0.7, 0.6]),
        training_step=5000,
    )
    # The reference document prints [0.97, 0.775, 0.635]; its own formula gives these.
    assert got.tolist() == pytest.approx([0.97, 0.755, 0.675])


def test_forward_rejects_mismatched_shapes() -> None:
    with pytest.raises(RewardInputError, match="shapes differ"):
        PARLReward()([0.1, 0.2], [0.1], [0.3, 0.4], 0)


def test_dtype_and_device_follow_inputs() -> None:
    fn = PARLReward()
    r = torch.tensor([0.5, 0.5], dtype=torch.float64)
    got = fn(r, r, r, 0)
    assert got.dtype == torch.float64 and got.device == r.device
    assert got.tolist() == pytest.approx([0.6, 0.6])


def test_gradients_flow_through_forward_and_full_reward() -> None:
    fn = PARLReward()
    r_parallel = torch.tensor([0.5, 0.2], requires_grad=True)
    r_perf = torch.tensor([0.4, 0.1], requires_grad=True)
    fn(r_parallel, torch.tensor([1.0, 1.0]), r_perf, 0).sum().backward()
    assert r_parallel.grad is not None and r_parallel.grad.tolist() == pytest.approx([0.1, 0.1])
    assert r_perf.grad is not None and r_perf.grad.tolist() == pytest.approx([1.0, 1.0])

    features = torch.full((2, 4), 0.5, requires_grad=True)
    out = fn.compute_full_reward(torch.tensor([1.0, 2.0]), features, torch.tensor([1.0, 0.0]), 0)
    out["total_reward"].sum().backward()
    assert features.grad is not None
    assert features.grad[0].tolist() == pytest.approx([0.25] * 4)
    assert features.grad[1].tolist() == pytest.approx([0.0] * 4)


def test_full_reward_keys_and_defaults() -> None:
    fn = PARLReward(lambda_init=0.1, lambda_final=0.0, total_training_steps=10000)
    out = fn.compute_full_reward(
        num_subagents=torch.tensor([25, 0, 50]),
        trajectory_features=torch.tensor([[1.0], [1.0], [0.5]]),
        success=torch.tensor([1.0, 1.0, 0.0]),
        training_step=5000,
    )
    assert set(out) == {
        "total_reward", "r_parallel", "r_finish", "r_perf", "lambda1", "lambda2",
        "instantiation_component", "finish_component", "task_component", "task_quality",
        "lambda_aux",
    }  # fmt: skip
    assert out["r_finish"].tolist() == pytest.approx([1.0, 0.0, 1.0])  # none assigned → 0
    assert out["total_reward"].tolist() == pytest.approx([0.05 * 0.25 + 0.05 + 1.0, 1.0, 0.075])
    assert out["lambda_aux"].item() == pytest.approx(0.05) and out["lambda2"].shape == ()


def test_full_reward_with_explicit_completion() -> None:
    out = PARLReward().compute_full_reward(
        torch.tensor([4]), torch.ones(1, 2), torch.ones(1), 0,
        max_subagents=8, completed_subtasks=torch.tensor([1]), assigned_subtasks=torch.tensor([4]),
    )  # fmt: skip
    assert out["r_parallel"].item() == pytest.approx(0.5)
    assert out["r_finish"].item() == pytest.approx(0.25)
    assert out["total_reward"].item() == pytest.approx(0.05 + 0.025 + 1.0)


def test_import_langmarl_rewards_does_not_import_torch() -> None:
    code = "import langmarl, langmarl.rewards, sys; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
