"""What an agent's update changed, as a state dict a rollout engine loads: the weight sync of
``rollout_placement="apart"``, as plain functions of models (no Ray here).

The weights an update changes are the model's trainable parameters and nothing else: with
LoRA the adapters (``lora_A``/``lora_B`` of each targeted layer; the base is frozen), for
full fine-tuning every parameter (the state dict less its buffers, which no update moves,
and with tied embeddings counted once, as ``named_parameters`` lists them). So
:func:`trained_weights` is what crosses after each update, and its :func:`nbytes` is the
sync's size: for SmolLM2-135M with LoRA r=16 on ``q_proj, v_proj`` 3.7 MB in fp32, for its
full fine-tuning 538 MB (the figures of docs/weight_space.md, "Past one machine").

The rollout engine holds a model built the same way from the same source (the same LoRA
seed, the same frozen base), so loading these tensors makes its weights equal to the
trained ones, bit for bit: :func:`load_trained_weights` refuses names that do not match
rather than loading part of a policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ConfigError

if TYPE_CHECKING:
    import torch


def trained_weights(model: Any) -> dict[str, torch.Tensor]:
    """CPU copies of ``model``'s trainable parameters, by name (what an update changed)."""
    return {
        name: param.detach().to("cpu", copy=True)
        for name, param in model.named_parameters()
        if param.requires_grad
    }


def nbytes(weights: Mapping[str, torch.Tensor]) -> int:
    """Bytes of the tensors in ``weights`` (what crosses the object store per sync)."""
    return sum(tensor.numel() * tensor.element_size() for tensor in weights.values())


def load_trained_weights(model: Any, weights: Mapping[str, torch.Tensor]) -> int:
    """Copy ``weights`` (from :func:`trained_weights` of the trained twin) into ``model``'s
    parameters of the same names, in place; return the bytes loaded.

    Raises:
        ConfigError: if the names differ from ``model``'s trainable parameters (the two
            models were not built alike: another LoRA config, another architecture).
    """
    import torch

    params = {name: p for name, p in model.named_parameters() if p.requires_grad}
    missing, unexpected = sorted(set(params) - set(weights)), sorted(set(weights) - set(params))
    if missing or unexpected:
        raise ConfigError(
            f"the rollout engine's model does not match the trained one (missing "
            f"{missing[:3]}, unexpected {unexpected[:3]}): build both from the same model "
            "and LoRA settings"
        )
    with torch.no_grad():
        for name, tensor in weights.items():
            params[name].copy_(tensor)
    return nbytes(weights)
