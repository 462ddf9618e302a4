"""Weight-only reduced-precision layers (issue 25) against ``nn.Linear``, within the error
their number formats allow: fp16 rounds a weight by at most 2^-11 of itself; per-channel int8
by half a row's scale, with bf16 (2^-9 relative) on the activations, scales and outputs."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from langmarl.core.errors import ConfigError
from langmarl.llm.local import weight_only
from langmarl.llm.local.weight_only import (
    Fp16Linear,
    Int8Linear,
    int8_per_channel,
    replace_linears,
    to_fp16_weights,
)

needs_fbgemm = pytest.mark.skipif(
    not weight_only.fp16_kernel_available(), reason="this torch has no fbgemm fp16 kernel"
)


def layer(bias: bool = True) -> nn.Linear:
    torch.manual_seed(0)
    linear = nn.Linear(96, 40, bias=bias)
    with torch.no_grad():
        linear.weight.mul_(torch.linspace(0.01, 3.0, 40)[:, None])  # rows of unlike ranges
    return linear


@needs_fbgemm
def test_fp16_linear_is_within_fp16_rounding_of_the_weights() -> None:
    linear = layer()
    x = torch.randn(2, 5, 96)  # [batch, positions, features], as the model calls it
    with torch.no_grad():
        exact = linear(x)
        bound = 2.0**-11 * (x.abs() @ linear.weight.abs().T) + 1e-5
        got = Fp16Linear(linear)(x)
    assert got.shape == exact.shape and got.dtype == torch.float32
    assert bool(((got - exact).abs() <= bound).all())
    assert not torch.equal(got, exact)  # it did round: the bound is not vacuous


@needs_fbgemm
def test_fp16_linear_refuses_weights_beyond_fp16() -> None:
    linear = layer(bias=False)
    with torch.no_grad():
        linear.weight[3, 7] = 1e6
    with pytest.raises(ConfigError, match=r"1e\+06.*engine 'transformers'"):
        Fp16Linear(linear)


def test_int8_codes_are_within_half_a_scale() -> None:
    weight = layer().weight.detach()
    weight[5] = 0.0  # an all-zero row must not divide by zero
    codes, scales = int8_per_channel(weight)
    assert codes.dtype == torch.int8 and scales.shape == (40,)
    error = (codes.float() * scales[:, None] - weight).abs()
    assert bool((error <= scales[:, None] / 2 + 1e-7).all())
    assert bool(torch.isfinite(scales).all()) and not codes[5].any()


def test_int8_linear_is_within_its_rounding() -> None:
    linear = layer()
    x = torch.randn(3, 4, 96)
    with torch.no_grad():
        exact = linear(x)
        scales = int8_per_channel(linear.weight)[1]
        weight_error = scales / 2 + 127 * scales * 2.0**-8  # codes, then the bf16 scale
        bound = (
            x.abs().sum(-1, keepdim=True) * weight_error  # weights
            + 2.0**-8 * (x.abs() @ linear.weight.abs().T)  # bf16 activations
            + 2.0**-8 * exact.abs()  # bf16 output
            + 1e-5
        )
        got = Int8Linear(linear)(x)
    assert got.shape == exact.shape and got.dtype == torch.float32
    assert bool(((got - exact).abs() <= bound).all())


def test_replace_linears_swaps_every_linear_in_place() -> None:
    inner = nn.Sequential(nn.Linear(8, 2))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), inner)
    replaced = replace_linears(model, lambda linear: nn.Identity())
    assert replaced is model
    assert not any(isinstance(m, nn.Linear) for m in model.modules())
    assert isinstance(model[1], nn.ReLU) and isinstance(inner[0], nn.Identity)


def test_fp16_weights_need_fbgemm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weight_only, "fp16_kernel_available", lambda: False)
    with pytest.raises(ConfigError, match=r"fbgemm.*use engine 'transformers'"):
        to_fp16_weights(nn.Sequential(nn.Linear(4, 4)))
