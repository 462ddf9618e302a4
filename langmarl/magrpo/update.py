"""One gradient update of an agent from scored completions (shared by MAGRPO, IAC and MAAC)."""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langmarl.magrpo.config import TrainerConfig
from langmarl.magrpo.generation import (
    GenerationBatch,
    completion_logprobs,
    shared_prompt_logprobs,
)
from langmarl.magrpo.kl import kl_k3
from langmarl.magrpo.loss import policy_gradient_loss
from langmarl.magrpo.policy import Agent

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)


@dataclass
class PolicyBatch:
    """Completions of one generation batch with the advantage of each row (``(B,)``).

    ``group``: rows per distinct prompt (G); each prompt is then run once per forward pass.
    """

    batch: GenerationBatch
    advantages: torch.Tensor
    group: int = 1


@dataclass
class UpdateStats:
    """What one agent's update did."""

    loss: float = 0.0
    kl: float = 0.0
    tokens: int = 0
    sequences: int = 0
    grad_norm: float = 0.0
    skipped_nonfinite: bool = False
    synced_bytes: int = 0
    """Bytes of trained weights sent to the agent's rollout actor after the update
    (``rollout_placement="apart"``, :mod:`langmarl.magrpo.placement.engine`); 0 otherwise."""


def _trimmed(batch: GenerationBatch, rows: Any) -> tuple[Any, Any, Any, int]:
    """Rows of a batch with all-padding columns removed on both sides (fewer FLOPs)."""
    sequences, attention = batch.sequences[rows], batch.attention_mask[rows]
    mask = batch.completion_mask[rows]
    prompt_length = batch.prompt_length
    first_real = int(attention[:, :prompt_length].any(dim=0).nonzero()[0])
    completion_width = max(int(mask.sum(dim=1).max()), 1)
    end = prompt_length + completion_width
    return (
        sequences[:, first_real:end],
        attention[:, first_real:end],
        mask[:, :completion_width],
        prompt_length - first_real,
    )


def arithmetic(agent: Agent) -> contextlib.AbstractContextManager[Any]:
    """The context an agent's update forward runs in: ``torch.autocast`` to bf16 when its
    ``update_precision`` is ``"bf16"`` (the backward follows the forward's dtypes; weights,
    gradients and the optimizer stay fp32), else nothing."""
    if agent.update_precision != "bf16":
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type=torch.device(agent.device).type, dtype=torch.bfloat16)


def _reference_logprobs(agent: Agent, sequences: Any, attention: Any, prompt: int) -> Any:
    import torch

    with torch.no_grad(), arithmetic(agent):
        if agent.uses_lora:
            with agent.model.disable_adapter():
                return completion_logprobs(agent.model, sequences, attention, prompt)
        return completion_logprobs(agent.reference, sequences, attention, prompt)


def accumulate_policy_gradients(
    agent: Agent, parts: Sequence[PolicyBatch], config: TrainerConfig
) -> UpdateStats:
    """Backpropagate the policy-gradient (+ KL) loss of every part into ``agent.model``.

    The loss is normalized over all parts together (every scored token, or every completion),
    so micro-batching does not change it. Rows with zero advantage are skipped when there is
    no KL term (their gradient is zero). A non-finite loss stops the accumulation, zeroes the
    gradients and sets ``skipped_nonfinite``; the caller must then not step.
    """
    import torch

    stats = UpdateStats()
    total_tokens = sum(int(p.batch.completion_mask.sum()) for p in parts)
    total_sequences = sum(len(p.batch) for p in parts)
    normalizer = total_tokens if config.loss_reduction == "token" else total_sequences
    stats.tokens, stats.sequences = total_tokens, total_sequences
    for part in parts:
        group = part.group
        groups = part.advantages.reshape(-1, group)
        keep = torch.arange(groups.shape[0], device=part.advantages.device)
        if config.beta == 0:
            keep = keep[(groups != 0).any(dim=1)]
        per_step = max(1, config.micro_batch_size // group)
        for start in range(0, len(keep), per_step):
            chosen = keep[start : start + per_step]
            rows = (chosen[:, None] * group + torch.arange(group, device=chosen.device)).reshape(-1)
            sequences, attention, mask, prompt = _trimmed(
                part.batch, rows.to(part.batch.sequences.device)
            )
            advantages = part.advantages[rows].to(sequences.device)
            with arithmetic(agent):
                if group > 1:
                    logprobs = shared_prompt_logprobs(
                        agent.model, sequences, attention, prompt, group
                    )
                else:
                    logprobs = completion_logprobs(agent.model, sequences, attention, prompt)
            loss = policy_gradient_loss(
                logprobs, advantages, mask, config.loss_reduction, normalizer
            )
            if config.beta > 0:
                reference = _reference_logprobs(agent, sequences, attention, prompt)
                kl = (kl_k3(logprobs, reference) * mask).sum() / max(total_tokens, 1)
                loss = loss + config.beta * kl
                stats.kl += float(kl.detach())
            if not math.isfinite(float(loss.detach())):
                log.warning(
                    "%s: non-finite loss (%s); skipping this update",
                    agent.name,
                    float(loss.detach()),
                )
                agent.optimizer.zero_grad(set_to_none=True)
                stats.skipped_nonfinite = True
                return stats
            loss.backward()
            stats.loss += float(loss.detach())
    return stats


def apply_gradients(agent: Agent, config: TrainerConfig, stats: UpdateStats) -> None:
    """Clip and step ``agent``'s optimizer (nothing but zeroing when the update was skipped)."""
    import torch

    if not stats.skipped_nonfinite:
        params = agent.trainable_parameters()
        if config.max_grad_norm is not None:
            norm = torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            stats.grad_norm = float(norm)
            if not math.isfinite(stats.grad_norm):
                log.warning("%s: non-finite gradient norm; skipping this update", agent.name)
                stats.skipped_nonfinite = True
        if not stats.skipped_nonfinite:
            agent.optimizer.step()
            agent.sampler.weights_changed()
    agent.optimizer.zero_grad(set_to_none=True)
