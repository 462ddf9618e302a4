"""The update's arithmetic: fp32, or bf16 autocast over fp32 weights (``update_precision``)."""

from __future__ import annotations

import pytest


def test_auto_is_bf16_only_on_a_cpu_that_multiplies_bf16_natively(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langmarl.magrpo import sampler
    from langmarl.magrpo.config import MAGRPOConfig
    from langmarl.magrpo.sampler import resolve_update_precision

    assert MAGRPOConfig().update_precision == "auto"
    monkeypatch.setattr(sampler, "bf16_is_native", lambda: True)
    assert resolve_update_precision("auto", "cpu") == "bf16"
    assert resolve_update_precision("auto", "cuda:0") == "fp32"  # never compared on a GPU
    assert resolve_update_precision("fp32", "cpu") == "fp32"  # an explicit choice stays
    monkeypatch.setattr(sampler, "bf16_is_native", lambda: False)
    assert resolve_update_precision("auto", "cpu") == "fp32"
    assert resolve_update_precision("bf16", "cpu") == "bf16"


def _gradients(tiny_models, precision: str):
    import torch

    from langmarl.magrpo.config import MAGRPOConfig
    from langmarl.magrpo.generation import GenerationBatch
    from langmarl.magrpo.policy import build_agents
    from langmarl.magrpo.update import PolicyBatch, accumulate_policy_gradients

    models, tokenizers = tiny_models
    config = MAGRPOConfig(num_agents=1, update_precision=precision, sampling_precision="fp32")
    (agent,) = build_agents(models[:1], config, tokenizers=tokenizers[:1])
    generator = torch.Generator().manual_seed(1)
    prompt = torch.randint(5, 1000, (2, 6), generator=generator)
    completions = torch.randint(5, 1000, (4, 5), generator=generator)
    batch = GenerationBatch(
        sequences=torch.cat([prompt.repeat_interleave(2, dim=0), completions], dim=1),
        attention_mask=torch.ones(4, 11, dtype=torch.long),
        prompt_length=6,
        completion_mask=torch.ones(4, 5),
        texts=["a", "b", "c", "d"],
    )
    advantages = torch.tensor([1.0, -1.0, 0.5, -0.5])
    stats = accumulate_policy_gradients(agent, [PolicyBatch(batch, advantages, group=2)], config)
    return agent, stats


def test_bf16_update_keeps_fp32_weights_and_gradients_close_to_fp32(tiny_models) -> None:
    """Mixed precision, not a bf16 model: the weights and their gradients stay fp32, and the
    gradient points where the fp32 one does (bf16 keeps 8 bits of mantissa: ~1% per op)."""
    import torch

    exact, exact_stats = _gradients(tiny_models, "fp32")
    exact_grads = [p.grad.clone() for p in exact.trainable_parameters()]
    for param in exact.trainable_parameters():
        param.grad = None
    mixed, mixed_stats = _gradients(tiny_models, "bf16")
    assert mixed.update_precision == "bf16" and exact.update_precision == "fp32"
    params = mixed.trainable_parameters()
    assert all(p.dtype == torch.float32 and p.grad.dtype == torch.float32 for p in params)
    flat_exact = torch.cat([g.flatten() for g in exact_grads])
    flat_mixed = torch.cat([p.grad.flatten() for p in params])
    assert not torch.equal(flat_exact, flat_mixed)  # the bf16 path did run
    cosine = torch.nn.functional.cosine_similarity(flat_exact, flat_mixed, dim=0)
    assert cosine > 0.99, float(cosine)
    assert mixed_stats.loss == pytest.approx(exact_stats.loss, rel=0.05, abs=1e-3)
