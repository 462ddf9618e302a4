import pytest
import torch

from langmarl.core.errors import ConfigError
from langmarl.magrpo.advantages import group_advantages, normalize_batch

VALUES = torch.tensor([[1.0, 2.0, 3.0, 6.0]])


def test_mean_baseline():
    assert torch.allclose(group_advantages(VALUES, "mean"), torch.tensor([[-2.0, -1.0, 0.0, 3.0]]))


def test_raw_is_the_value():
    assert torch.equal(group_advantages(VALUES, "raw"), VALUES)


def test_max_baseline_is_never_positive():
    result = group_advantages(VALUES, "max")
    assert torch.allclose(result, torch.tensor([[-5.0, -4.0, -3.0, 0.0]]))


def test_rloo_subtracts_the_mean_of_the_others():
    result = group_advantages(VALUES, "rloo")
    assert result[0, 0] == pytest.approx(1.0 - (2 + 3 + 6) / 3)
    assert result[0, 3] == pytest.approx(6.0 - 2.0)


def test_groups_are_independent_rows():
    values = torch.tensor([[0.0, 2.0], [10.0, 10.0]])
    result = group_advantages(values, "mean")
    assert torch.allclose(result, torch.tensor([[-1.0, 1.0], [0.0, 0.0]]))


def test_normalize_divides_by_group_std_and_stays_finite_for_ties():
    values = torch.tensor([[0.0, 2.0], [5.0, 5.0]])
    result = group_advantages(values, "mean", normalize=True)
    assert torch.allclose(result[0], torch.tensor([-1.0, 1.0]), atol=1e-4)
    assert torch.isfinite(result).all()


def test_unknown_mode_lists_the_modes():
    with pytest.raises(ConfigError, match="rloo"):
        group_advantages(VALUES, "median")


def test_normalize_batch():
    result = normalize_batch(torch.tensor([1.0, 3.0]))
    assert torch.allclose(result, torch.tensor([-1.0, 1.0]), atol=1e-4)
    assert normalize_batch(torch.tensor([4.0])).item() == 0.0
