"""Weight-only reduced precision for the engine's ``nn.Linear`` layers (issue 25).

At one request a decoding step of the fp32 model is bound by reading its weights (540 MB a
token; 87% of a step is ``aten::mm``, measured here), so storing them in fewer bytes while
keeping the arithmetic in fp32 should speed it up without changing the answers. Two ways were
measured (benchmarks/RESULTS.md, issue 25; 2 threads, against fp32):

- :class:`Fp16Linear` (engine ``"w16"``): fp16 weights packed for fbgemm, fp32 activations,
  fp32 accumulation (``quantized::linear_dynamic_fp16``). Half the bytes, and fbgemm's kernel
  reads them faster than MKL's fp32 one (75 against 307 µs for a 1536x576 layer out of
  cache, one row; 176 against 451 µs for eight rows, one thread). The embedded model's
  weights come from a Q4_1/Q8_0 GGUF file; in fp16 each moves by at most 2^-11 of itself
  (the tiniest, below 2^-14, by at most 2^-25), and the greedy answers on the check set stay
  fp32's token for token. 2.66x / 1.96x the tokens/s at 1 / 8 concurrent requests.
- :class:`Int8Linear` (engine ``"w8"``): int8 weights with one scale per output channel.
  Kept for comparison only (2.37x / 1.38x, 23 of 25 answers right, 16 identical to fp32's):
  torch's ``_weight_int8pack_mm`` is vectorized only for bf16 activations (with fp32 ones it
  ran 10x slower than fp32 here), so the activations are rounded to bf16 on the way in; and
  even with exact fp32 arithmetic, per-channel int8 weights changed 11 of 25 greedy answers
  (one to "4 + 4 = 12"). The GGUF weights have a scale per 32 inputs, which one scale per
  row cannot follow.

Both convert every ``nn.Linear`` the model holds, the LM head included (tied to the
embedding: the head gets its own copy, the embedding lookup stays fp32). The converted model
is for inference only: it has no trainable weights.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from langmarl.core.errors import ConfigError

FP16_MAX = 65504.0
"""Largest finite fp16 value; fbgemm would clamp larger weights with only a warning."""


def fp16_kernel_available() -> bool:
    """Whether this torch has fbgemm's fp16 kernel (x86 builds; not Arm ones)."""
    return "fbgemm" in torch.backends.quantized.supported_engines


class Fp16Linear(nn.Module):
    """``nn.Linear`` with fp16 weights and fp32 activations, output and accumulation.

    Args:
        linear: The layer to copy (its weights are read once, not kept).

    Raises:
        ConfigError: if a weight does not fit in fp16 (fbgemm would clamp it).
    """

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.pack(linear)

    def pack(self, linear: nn.Linear) -> None:
        """Take ``linear``'s current weights (same shape), e.g. after a training step."""
        weight = linear.weight.detach().float()
        largest = float(weight.abs().max()) if weight.numel() else 0.0
        if largest > FP16_MAX:
            raise ConfigError(
                f"a {self.out_features}x{self.in_features} Linear has a weight of {largest:g}, "
                f"beyond fp16's {FP16_MAX:g}: keep this model in fp32 (engine 'transformers', "
                "sampling_precision 'fp32')"
            )
        bias = None if linear.bias is None else linear.bias.detach().float()
        self.packed = torch.ops.quantized.linear_prepack_fp16(weight, bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``[..., in_features]`` fp32 -> ``[..., out_features]`` fp32."""
        return torch.ops.quantized.linear_dynamic_fp16(x, self.packed)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, fp16 weights"


def int8_per_channel(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 codes of ``weight`` ``[N, K]`` and their per-row scales ``[N]``:
    ``weight ≈ codes * scales[:, None]``, within half a scale per element."""
    scales = (weight.abs().amax(dim=1) / 127).clamp(min=torch.finfo(torch.float32).tiny)
    codes = torch.round(weight / scales[:, None]).clamp(-127, 127).to(torch.int8)
    return codes, scales


class Int8Linear(nn.Module):
    """``nn.Linear`` with per-channel int8 weights; activations go through bf16 (see the
    module docstring: torch's fp32 path of this kernel is scalar).

    Args:
        linear: The layer to copy.
    """

    codes: torch.Tensor
    scales: torch.Tensor
    bias: torch.Tensor | None

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        codes, scales = int8_per_channel(linear.weight.detach().float())
        self.register_buffer("codes", codes)
        self.register_buffer("scales", scales.to(torch.bfloat16))
        bias = None if linear.bias is None else linear.bias.detach().float()
        self.register_buffer("bias", bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` ``[..., in_features]`` -> ``[..., out_features]`` in ``x``'s dtype.

        The kernel takes a contiguous 2-D bf16 input, so leading dimensions are folded."""
        rows = x.reshape(-1, self.in_features).to(torch.bfloat16).contiguous()
        out = torch._weight_int8pack_mm(rows, self.codes, self.scales).to(x.dtype)
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 weights"


def replace_linears(
    model: nn.Module,
    make: Callable[[nn.Linear], nn.Module],
    keep: Callable[[nn.Linear], bool] = lambda linear: False,
) -> nn.Module:
    """Swap every ``nn.Linear`` inside ``model`` for ``make(linear)``, in place, except those
    ``keep`` selects.

    Returns:
        ``model`` (for chaining); the replaced layers' weights are freed unless tied elsewhere.
    """
    targets = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if isinstance(child, nn.Linear) and not keep(child)
    ]
    for parent, name, child in targets:
        setattr(parent, name, make(child))
    return model


def to_fp16_weights(model: nn.Module) -> nn.Module:
    """``model`` with every ``nn.Linear`` an :class:`Fp16Linear` (engine ``"w16"``).

    Raises:
        ConfigError: if this torch has no fbgemm (see :func:`fp16_kernel_available`) or a
            weight does not fit in fp16.
    """
    if not fp16_kernel_available():
        raise ConfigError(
            "engine 'w16' needs torch's fbgemm kernels, which this build lacks "
            f"(quantized engines: {torch.backends.quantized.supported_engines}): "
            "use engine 'transformers'"
        )
    return replace_linears(model, Fp16Linear)


def to_int8_weights(model: nn.Module) -> nn.Module:
    """``model`` with every ``nn.Linear`` an :class:`Int8Linear` (engine ``"w8"``)."""
    return replace_linears(model, Int8Linear)
