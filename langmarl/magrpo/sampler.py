"""The model an agent samples its rollouts from: the trained one, or a lower-precision copy.

Why a copy: decoding reads every weight once per token, so on a CPU its speed is the bytes
read. For SmolLM2-135M at G = 4 on one thread (benchmarks/RESULTS.md, issue 16) a decode
step took 88 ms in fp32, 62 ms from a bf16 copy and 26 ms from an int8 copy (torch dynamic
quantization of every ``nn.Linear``). A ``w16`` copy keeps fp32 arithmetic on fp16 weights
(:class:`~langmarl.llm.local.weight_only.Fp16Linear`, the embedded engine's default: its
greedy answers are fp32's, token for token); a LoRA model's frozen base is packed once (and
shared by the copies of agents that share that base) and only the adapters, kept fp32, are
refreshed. The copy is refreshed from the trained weights after
every update, so it samples the current policy, rounded; the update's log-probabilities
always come from the trained fp32 weights (in fp32 arithmetic, or bf16 autocast with
``update_precision``), so the gradient is that of the trained policy on samples from its
rounded twin (a small off-policy gap, not corrected by importance weights).
Greedy evaluation always uses the trained model.
"""

from __future__ import annotations

import copy
import threading
import warnings
from collections.abc import Iterable, MutableMapping
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.magrpo.config import SamplingPrecision, UpdatePrecision


def resolve_precision(
    precision: SamplingPrecision, lora: bool, device: str = "cpu"
) -> SamplingPrecision:
    """``"auto"`` made concrete: ``"w16"`` for a LoRA model (its frozen base is packed once;
    fbgemm needed, else fp32); for a fully trained one ``"bf16"`` where the CPU multiplies
    bf16 natively (:func:`bf16_is_native`), else ``"fp32"`` (re-packing every layer as w16
    after each update would cost ~1.3 s on one thread); any other value as it is. Off the
    CPU (``device`` ``cuda:*``), ``"auto"`` is ``"fp32"``, as for the update: no GPU figure
    has chosen otherwise yet (``benchmarks/gpu_check.py``).

    Raises:
        ConfigError: ``"w16"`` or ``"int8"`` on a device other than the CPU (their kernels,
            fbgemm's and torch's dynamic quantization, are CPU kernels).
    """
    on_cpu = str(device).startswith("cpu")
    if precision in ("w16", "int8") and not on_cpu:
        raise ConfigError(
            f"trainer.sampling_precision is {precision!r} for an agent on {device!r}, but "
            f"{precision} copies run on CPU kernels only: use 'bf16', 'fp32' or 'auto' there"
        )
    if precision != "auto":
        return precision
    if not on_cpu:
        return "fp32"
    if not lora:
        return "bf16" if bf16_is_native() else "fp32"
    from langmarl.llm.local.weight_only import fp16_kernel_available

    return "w16" if fp16_kernel_available() else "fp32"


def resolve_update_precision(precision: UpdatePrecision, device: str) -> UpdatePrecision:
    """``"auto"`` made concrete for the update: ``"bf16"`` (autocast) on a CPU that multiplies
    bf16 natively, ``"fp32"`` elsewhere (CUDA included: bf16 there is only used when asked,
    since no GPU run has compared it here); any other value as it is."""
    if precision != "auto":
        return precision
    return "bf16" if str(device).startswith("cpu") and bf16_is_native() else "fp32"


def bf16_is_native() -> bool:
    """Whether bf16 matmuls run in hardware here: a CPU with AVX512-BF16 or AMX-BF16
    (:func:`langmarl.core.machine.native_bf16`) and torch dispatching to its AVX-512 kernels
    (``ATEN_CPU_CAPABILITY`` may cap them). Elsewhere bf16 is emulated and several times
    slower than fp32 (issue 37: an AVX2-only CPU would sample bf16 rollouts 3-4× slower)."""
    import torch

    from langmarl.core.machine import native_bf16

    return native_bf16() and torch.backends.cpu.get_cpu_capability() == "AVX512"


class Sampler:
    """Keeps an agent's sampling copy (none for ``"fp32"``) in step with its weights."""

    def __init__(self, precision: SamplingPrecision = "fp32") -> None:
        if precision == "auto":
            raise ValueError("resolve 'auto' first (resolve_precision): it depends on LoRA")
        self.precision = precision
        self._copy: Any = None
        self._stale = True

    def weights_changed(self) -> None:
        """Say the trained weights moved (an optimizer step, a checkpoint loaded): the next
        :meth:`model_for` refreshes the copy. Told, not detected: tensor version counters
        miss the fused AdamW step, and comparing weights costs as much as copying them."""
        self._stale = True

    def model_for(self, model: Any) -> Any:
        """The model to sample from now: ``model`` itself, or its copy, refreshed from it if
        the weights changed since the last call (so once a step, not once a turn: a ``w16``
        refresh of a fully trained SmolLM2-135M re-packs every layer, ~1.3 s on one thread)."""
        if self.precision == "fp32":
            return model
        import torch

        if self._stale:
            with torch.no_grad():
                if self._copy is None:
                    self._copy = _build(model, self.precision)
                else:
                    _refresh(self._copy, model)
            self._stale = False
        return self._copy


def _build(model: Any, precision: SamplingPrecision) -> Any:
    import torch

    if precision == "bf16":
        return _cast_copy(model, torch.bfloat16)
    if precision == "w16":
        from langmarl.llm.local.weight_only import fp16_kernel_available, replace_linears

        if not fp16_kernel_available():
            raise ConfigError(
                "trainer.sampling_precision 'w16' needs torch's fbgemm kernels, which this "
                "build lacks (x86 builds have them): use 'bf16' or 'fp32'"
            )
        # the frozen tensors are the model's own, not copies: they never change (a LoRA base)
        twin = twin_sharing(model, [p for p in model.parameters() if not p.requires_grad]).eval()
        adapters = _adapter_layers(twin)
        twin = replace_linears(twin, _fp16_layer, keep=lambda linear: id(linear) in adapters)
        return twin.requires_grad_(False)
    twin = copy.deepcopy(model).eval().requires_grad_(False)
    adapters = _adapter_layers(twin)
    spec = {
        name: torch.ao.quantization.default_dynamic_qconfig
        for name, module in twin.named_modules()
        if isinstance(module, torch.nn.Linear) and id(module) not in adapters
    }
    with warnings.catch_warnings():  # torch >= 2.10 points eager quantization at torchao
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(twin, spec, torch.qint8)


def twin_sharing(model: Any, params: Iterable[Any]) -> Any:
    """``copy.deepcopy(model)`` that holds ``params`` themselves, not copies of them (through
    deepcopy's memo, so tied weights stay tied)."""
    return copy.deepcopy(model, {id(param): param for param in params})


_FROZEN_FP16: MutableMapping[Any, Any] | None = None
"""Frozen weight tensor -> its packed fp16 layer, shared by every ``w16`` copy that holds
that tensor: agents that share a LoRA base (:func:`langmarl.magrpo.policy.build_agents`)
pack it once. Keyed by identity, weakly (torch's ``WeakIdKeyDictionary``, made on first use):
an entry goes with the last model holding the tensor."""
_FROZEN_FP16_LOCK = threading.Lock()
"""Agents sampling in parallel threads build their copies at once: one packs, the other waits."""


def _fp16_layer(linear: Any) -> Any:
    """``Fp16Linear(linear)``; for a frozen layer without bias, the one already packed from
    the same weight tensor if there is one (a trained layer is re-packed after every update,
    so it is always the copy's own)."""
    from torch.utils.weak import WeakIdKeyDictionary

    from langmarl.llm.local.weight_only import Fp16Linear

    global _FROZEN_FP16
    if linear.weight.requires_grad or linear.bias is not None:
        return Fp16Linear(linear)
    with _FROZEN_FP16_LOCK:
        if _FROZEN_FP16 is None:
            _FROZEN_FP16 = WeakIdKeyDictionary()
        layer = _FROZEN_FP16.get(linear.weight)
        if layer is None:
            layer = _FROZEN_FP16[linear.weight] = Fp16Linear(linear)
        return layer


def _cast_copy(model: Any, dtype: Any) -> Any:
    """``copy.deepcopy(model).eval().requires_grad_(False).to(dtype)``, without the
    full-precision copy of every weight in between: each parameter is cast straight into
    the twin (through deepcopy's memo, so tied weights stay tied), then ``.to`` casts the
    buffers as it always did (and leaves the cast parameters as they are). For
    SmolLM2-135M that skips a ~540 MB fp32 clone per agent (143k -> 63k page faults; a few
    tenths of a second on one thread). Parameters of a subclass keep the plain path."""
    import torch

    memo: dict[int, Any] = {}
    for param in model.parameters():
        if type(param) is not torch.nn.Parameter:
            return copy.deepcopy(model).eval().requires_grad_(False).to(dtype)
        if id(param) not in memo:
            data = param.detach()
            if data.is_floating_point() or data.is_complex():
                data = data.to(dtype, copy=True)
            else:
                data = data.clone()
            memo[id(param)] = torch.nn.Parameter(data, requires_grad=False)
    return copy.deepcopy(model, memo).eval().requires_grad_(False).to(dtype)


def _adapter_layers(model: Any) -> set[int]:
    """Ids of the LoRA adapters' own ``nn.Linear`` layers in a peft model (none otherwise).

    They stay fp32 in a ``w16`` or ``int8`` copy: peft reads their weight's dtype, and at
    rank r they are a sliver of the bytes a decoding step reads."""
    return {
        id(layer)
        for module in model.modules()
        for attribute in getattr(module, "adapter_layer_names", ())
        for layer in getattr(module, attribute).modules()
    }


def _refresh(twin: Any, model: Any) -> None:
    """Copy the weights ``model`` trains into ``twin`` (cast, re-packed in fp16, or
    re-quantized per tensor). Frozen weights (a LoRA model's base) never change, so they
    stay as the copy was built."""
    import torch

    from langmarl.llm.local.weight_only import Fp16Linear

    twin_modules = dict(twin.named_modules())
    for name, module in model.named_modules():
        if not (isinstance(module, torch.nn.Linear) and module.weight.requires_grad):
            continue
        converted = twin_modules.get(name)
        if isinstance(converted, Fp16Linear):
            converted.pack(module)
        elif isinstance(converted, torch.ao.nn.quantized.dynamic.Linear):
            converted.set_weight_bias(_qint8(module.weight.detach()), module.bias)
    params = dict(twin.named_parameters())
    for name, param in model.named_parameters():
        if param.requires_grad and name in params:
            params[name].copy_(param.detach())


def _qint8(weight: Any) -> Any:
    """``weight`` quantized as ``quantize_dynamic`` does it (its default weight observer)."""
    import torch

    observer = torch.ao.quantization.default_weight_observer()
    observer(weight)
    scale, zero_point = observer.calculate_qparams()
    return torch.quantize_per_tensor(weight, float(scale), int(zero_point), torch.qint8)
