"""The model an agent samples its rollouts from: the trained one, or a lower-precision copy.

Why a copy: decoding reads every weight once per token, so on a CPU its speed is the bytes
read. For SmolLM2-135M at G = 4 on one thread (benchmarks/RESULTS.md, issue 16) a decode
step took 88 ms in fp32, 62 ms from a bf16 copy and 26 ms from an int8 copy (torch dynamic
quantization of every ``nn.Linear``). The copy is refreshed from the trained weights before
every rollout, so it samples the current policy, rounded; the update's log-probabilities
always come from the trained fp32 model, so the gradient is that of the fp32 policy on
samples from its rounded twin (a small off-policy gap, not corrected by importance weights).
Greedy evaluation always uses the trained model.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

from langmarl.magrpo.config import SamplingPrecision


class Sampler:
    """Keeps an agent's sampling copy (none for ``"fp32"``) in step with its weights."""

    def __init__(self, precision: SamplingPrecision = "fp32") -> None:
        self.precision = precision
        self._copy: Any = None

    def model_for(self, model: Any) -> Any:
        """The model to sample from now: ``model`` itself, or its copy refreshed from it.

        Refreshed on every call, also between the turns of one step: tensor version counters
        cannot tell whether the weights changed (the fused AdamW step does not bump them), and
        a bf16 refresh costs ~0.03 s."""
        if self.precision == "fp32":
            return model
        import torch

        with torch.no_grad():
            if self._copy is None:
                self._copy = _build(model, self.precision)
            else:
                _refresh(self._copy, model)
        return self._copy


def _build(model: Any, precision: SamplingPrecision) -> Any:
    import torch

    twin = copy.deepcopy(model).eval().requires_grad_(False)
    if precision == "bf16":
        return twin.to(torch.bfloat16)
    with warnings.catch_warnings():  # torch >= 2.10 points eager quantization at torchao
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(twin, {torch.nn.Linear}, torch.qint8)


def _refresh(twin: Any, model: Any) -> None:
    """Copy ``model``'s current weights into ``twin`` (cast, or re-quantized per tensor)."""
    import torch

    params = dict(twin.named_parameters())
    quantized = {
        name: module
        for name, module in twin.named_modules()
        if isinstance(module, torch.ao.nn.quantized.dynamic.Linear)
    }
    for name, module in model.named_modules():
        if name in quantized and isinstance(module, torch.nn.Linear):
            quantized[name].set_weight_bias(_qint8(module.weight.detach()), module.bias)
    for name, param in model.named_parameters():
        if name in params:
            params[name].copy_(param.detach())


def _qint8(weight: Any) -> Any:
    """``weight`` quantized as ``quantize_dynamic`` does it (its default weight observer)."""
    import torch

    observer = torch.ao.quantization.default_weight_observer()
    observer(weight)
    scale, zero_point = observer.calculate_qparams()
    return torch.quantize_per_tensor(weight, float(scale), int(zero_point), torch.qint8)
