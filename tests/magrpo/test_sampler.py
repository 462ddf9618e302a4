"""Rollouts sampled from a bf16, w16 or int8 copy that follows the trained weights."""

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


@pytest.mark.parametrize(
    "precision, dtype", [("bf16", torch.bfloat16), ("w16", None), ("int8", None)]
)
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
    assert torch.equal(logits(sampler.model_for(model), ids), stale)  # not told: kept
    sampler.weights_changed()
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


@pytest.mark.parametrize("precision", ["w16", "int8"])
def test_a_copy_of_a_lora_model_converts_its_frozen_base_once(tiny_models, precision):
    from langmarl.llm.local.weight_only import Fp16Linear
    from langmarl.magrpo.config import LoRAConfig
    from langmarl.magrpo.policy import apply_lora

    converted = {"w16": Fp16Linear, "int8": torch.ao.nn.quantized.dynamic.Linear}[precision]
    model = apply_lora(tiny_models[0][0], LoRAConfig(r=4, alpha=8)).eval()
    ids = torch.tensor([[5, 17, 300, 42, 7]])
    sampler = Sampler(precision)
    twin = sampler.model_for(model)
    layers = dict(twin.named_modules())
    base = [m for n, m in layers.items() if n.endswith("q_proj.base_layer")]
    adapters = [m for n, m in layers.items() if ".lora_B." in n]
    assert base and all(isinstance(m, converted) for m in base)
    assert adapters and all(type(m) is torch.nn.Linear for m in adapters)  # peft reads .weight
    assert isinstance(layers["base_model.model.lm_head"], converted)
    packed = [m._packed_params._packed_params if precision == "int8" else m.packed for m in base]
    with torch.no_grad():  # a training step moves only the adapters
        for param in model.parameters():
            if param.requires_grad:
                param.add_(torch.randn_like(param) * 0.5)
    stale = logits(twin, ids).clone()
    sampler.weights_changed()
    assert sampler.model_for(model) is twin
    now = [m._packed_params._packed_params if precision == "int8" else m.packed for m in base]
    # the frozen base is not converted again
    assert all(a is b for a, b in zip(now, packed, strict=True))
    reference = logits(model, ids)
    assert not torch.allclose(stale, logits(twin, ids), atol=1e-4)
    error = (logits(twin, ids) - reference).abs().max() / reference.abs().max()
    assert error < {"w16": 1e-2, "int8": 0.05}[precision]


def test_auto_is_w16_with_lora_and_bf16_for_full_fine_tuning_where_bf16_is_native(
    monkeypatch: pytest.MonkeyPatch,
):
    """The default, decided by the quickstart's 10-seed A/B and the comlrl benchmark; on a
    CPU without native bf16 (issue 37: emulated, 3-4× slower than fp32) full fine-tuning
    samples in fp32."""
    from langmarl.magrpo import sampler
    from langmarl.magrpo.config import MAGRPOConfig
    from langmarl.magrpo.sampler import resolve_precision

    assert MAGRPOConfig().sampling_precision == "auto"
    monkeypatch.setattr(sampler, "bf16_is_native", lambda: True)
    assert resolve_precision("auto", lora=True) == "w16"
    assert resolve_precision("auto", lora=False) == "bf16"
    assert resolve_precision("fp32", lora=True) == "fp32"  # an explicit choice stays
    assert resolve_precision("bf16", lora=False) == "bf16"
    monkeypatch.setattr(sampler, "bf16_is_native", lambda: False)
    assert resolve_precision("auto", lora=False) == "fp32"
    assert resolve_precision("auto", lora=True) == "w16"
    assert resolve_precision("bf16", lora=False) == "bf16"  # asked for: as asked
    with pytest.raises(ValueError, match="resolve"):
        Sampler("auto")


def test_off_the_cpu_auto_samples_in_fp32_and_cpu_kernels_are_refused() -> None:
    """On CUDA the quickstart's 'auto' would have been w16 (fbgemm: a CPU kernel)."""
    from langmarl.core.errors import ConfigError
    from langmarl.magrpo.sampler import resolve_precision

    assert resolve_precision("auto", lora=True, device="cuda:0") == "fp32"
    assert resolve_precision("auto", lora=False, device="cuda") == "fp32"
    assert resolve_precision("bf16", lora=True, device="cuda:1") == "bf16"
    for precision in ("w16", "int8"):
        with pytest.raises(ConfigError, match=rf"sampling_precision is '{precision}' .*'cuda:0'"):
            resolve_precision(precision, lora=True, device="cuda:0")


def test_a_bf16_copy_cast_directly_is_the_deep_copy_cast(tiny_models):
    """The bf16 copy is built without an fp32 clone in between, and is what
    ``deepcopy(model).eval().requires_grad_(False).to(bf16)`` would be, bit for bit: same
    parameters, buffers, ties and logits, its own storage, the trained model untouched."""
    import copy

    model = tiny_models[0][0].train()
    ids = torch.tensor([[5, 17, 300, 42, 7]])
    twin = Sampler("bf16").model_for(model)
    plain = copy.deepcopy(model).eval().requires_grad_(False).to(torch.bfloat16)
    ours, theirs = twin.state_dict(keep_vars=True), plain.state_dict(keep_vars=True)
    assert ours.keys() == theirs.keys()
    for name, tensor in theirs.items():
        mine = ours[name]
        assert (type(mine), mine.dtype, mine.stride()) == (
            type(tensor),
            tensor.dtype,
            tensor.stride(),
        )
        assert torch.equal(mine, tensor) and not mine.requires_grad, name
    tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
    assert (twin.get_output_embeddings().weight is twin.get_input_embeddings().weight) == tied
    trained = {id(p) for p in model.parameters()} | {p.data_ptr() for p in model.parameters()}
    assert not any(id(p) in trained or p.data_ptr() in trained for p in twin.parameters())
    assert model.training and not twin.training
    assert next(model.parameters()).dtype == torch.float32
    assert torch.equal(logits(twin, ids), logits(plain, ids))
