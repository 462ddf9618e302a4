"""Rollouts sampled from a bf16 or int8 copy that follows the trained weights."""

import pytest
import torch

from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.sampler import Sampler
from langmarl.magrpo.trainer import MAGRPOTrainer


def logits(model, ids):
    with torch.no_grad():
        return model(input_ids=ids).logits.float()


def nudge(model):
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.05)


def test_fp32_samples_from_the_trained_model_itself(tiny_models):
    model = tiny_models[0][0]
    assert Sampler("fp32").model_for(model) is model


@pytest.mark.parametrize("precision, dtype", [("bf16", torch.bfloat16), ("int8", None)])
def test_copy_follows_the_trained_weights(tiny_models, precision, dtype):
    model = tiny_models[0][0].eval()
    ids = torch.tensor([[5, 17, 300, 42, 7]])
    sampler = Sampler(precision)
    first = sampler.model_for(model)
    assert first is not model and next(model.parameters()).dtype == torch.float32
    if dtype is not None:
        assert next(first.parameters()).dtype == dtype
    nudge(model)
    stale = logits(first, ids).clone()
    refreshed = sampler.model_for(model)
    assert refreshed is first  # refreshed in place, not rebuilt
    fresh = Sampler(precision).model_for(model)  # built from the new weights
    assert torch.allclose(logits(refreshed, ids), logits(fresh, ids), atol=1e-5)
    assert not torch.allclose(stale, logits(refreshed, ids), atol=1e-3)
    # the rounded copy stays close to the fp32 policy it samples for
    reference = logits(model, ids)
    error = (logits(refreshed, ids) - reference).abs().max() / reference.abs().max()
    assert error < 0.05


def test_training_with_a_bf16_sampler_updates_the_fp32_model(tiny_models, tmp_path):
    models, tokenizers = tiny_models
    config = MAGRPOConfig(
        output_dir=str(tmp_path / "run"),
        num_generations=2,
        max_new_tokens=4,
        max_steps=2,
        use_chat_template=False,
        sampling_precision="bf16",
    )
    data = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]
    trainer = MAGRPOTrainer(
        models,
        lambda s: [float(len(x.completions[0]) % 5) for x in s],
        config,
        tokenizers=tokenizers,
        train_dataset=data,
    )
    before = trainer.agents[0].model.model.embed_tokens.weight.detach().clone()
    history = trainer.train()
    agent = trainer.agents[0]
    assert len(history) == 2 and agent.model.model.embed_tokens.weight.dtype == torch.float32
    assert not torch.equal(before, agent.model.model.embed_tokens.weight)
    twin = agent.sampler.model_for(agent.model)
    assert twin.model.embed_tokens.weight.dtype == torch.bfloat16
    trained = agent.model.model.embed_tokens.weight
    assert torch.equal(twin.model.embed_tokens.weight, trained.bfloat16())
