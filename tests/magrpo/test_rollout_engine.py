"""``rollout_placement="apart"`` without Ray: the weight sync (langmarl.magrpo.placement.weights),
the embedded rollout engine against the agent it mirrors (placement/engine.py), the parts of
the vLLM adapter that need no vLLM (placement/vllm_engine.py) and the config's checks. The
run on two Ray nodes is in test_ray_placement.py."""

from __future__ import annotations

import copy
import sys

import pydantic
import pytest

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.placement.cluster import check_resources

PROMPTS = ["Say hi.", "Name a color."]


def _config(**overrides):
    settings = {"num_agents": 1, "num_generations": 2, "max_new_tokens": 4,
                "use_chat_template": False, "num_threads": 1, "learning_rate": 1e-2,
                **overrides}  # fmt: skip
    return MAGRPOConfig(**settings)


def _step(agent, config) -> None:
    """One policy-gradient update of ``agent`` on its own samples (its weights move)."""
    import torch

    from langmarl.magrpo.placement.engine import sample
    from langmarl.magrpo.update import PolicyBatch, accumulate_policy_gradients, apply_gradients

    batch = sample(agent, PROMPTS, 2, False, seed=1, config=config)
    parts = [PolicyBatch(batch, torch.tensor([1.0, -1.0, 0.5, -0.5]), group=2)]
    apply_gradients(agent, config, accumulate_policy_gradients(agent, parts, config))
    agent.sampler.weights_changed()


@pytest.mark.parametrize("lora", [None, {"r": 4, "alpha": 8}], ids=["full", "lora"])
def test_the_engine_samples_as_the_trained_agent_once_its_weights_are_loaded(tiny_models, lora):
    import torch

    from langmarl.magrpo.placement.engine import EmbeddedEngine, sample
    from langmarl.magrpo.placement.weights import nbytes, trained_weights
    from langmarl.magrpo.policy import build_agents

    models, tokenizers = tiny_models
    config = _config(lora=lora)
    engine = EmbeddedEngine(0, copy.deepcopy(models[0]), tokenizers[0], config, "cpu")
    (agent,) = build_agents([models[0]], config, tokenizers=[tokenizers[0]])
    _step(agent, config)
    weights = trained_weights(agent.model)
    trainable = [p for p in agent.model.parameters() if p.requires_grad]
    assert nbytes(weights) == sum(p.numel() * 4 for p in trainable)  # fp32, nothing else
    if lora:  # the adapters only: a sliver of the model
        assert all("lora_" in name for name in weights)
        assert nbytes(weights) < sum(p.numel() * 4 for p in agent.model.parameters()) / 10
    assert engine.load_weights(weights) == nbytes(weights)
    synced = dict(engine.agent.model.named_parameters())
    assert all(torch.equal(synced[name], tensor) for name, tensor in weights.items())
    for greedy in (False, True):  # the sampler's copy (refreshed) and the trained model
        got = engine.generate(PROMPTS, 2, greedy, seed=5)
        wanted = sample(agent, PROMPTS, 2, greedy, seed=5, config=config)
        assert got.texts == wanted.texts and torch.equal(got.sequences, wanted.sequences)


def test_weights_of_another_model_are_refused(tiny_models) -> None:
    from langmarl.magrpo.placement.engine import EmbeddedEngine
    from langmarl.magrpo.placement.weights import trained_weights

    models, tokenizers = tiny_models
    engine = EmbeddedEngine(0, models[0], tokenizers[0], _config(), "cpu")
    lora = EmbeddedEngine(0, models[1], tokenizers[1], _config(lora={"r": 2}), "cpu")
    with pytest.raises(ConfigError, match="does not match the trained one") as error:
        engine.load_weights(trained_weights(lora.agent.model))
    assert "\n" not in str(error.value)


# -- the config: bad input in one line ----------------------------------------------------------
@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"rollout_placement": "apart"}, "set placement='ray', or rollout_placement"),
        ({"placement": "ray", "rollout_engine": "vllm"}, "set rollout_placement='apart'"),
        ({"placement": "ray", "rollout_placement": "apart", "rollout_engine": "vllm"},
         "rollout_num_gpus=0"),
    ],
)  # fmt: skip
def test_bad_rollout_settings_say_what_to_set(settings, said) -> None:
    with pytest.raises(pydantic.ValidationError, match=said):
        MAGRPOConfig(**settings)
    assert MAGRPOConfig().rollout_placement == "with_agent"  # the default is today's


def test_vllm_without_the_package_names_the_extra(monkeypatch) -> None:
    from langmarl.magrpo.placement.vllm_engine import VLLMEngine

    monkeypatch.setitem(sys.modules, "vllm", None)  # what `import vllm` sees when not installed
    settings = {"placement": "ray", "rollout_placement": "apart", "rollout_engine": "vllm",
                "rollout_num_gpus": 1}  # fmt: skip
    config = MAGRPOConfig.model_construct(**{**MAGRPOConfig().model_dump(), **settings})
    with pytest.raises(MissingDependencyError, match=r"pip install 'langmarl\[vllm\]'"):
        VLLMEngine(0, "smollm2", None, config, "cuda")
    with pytest.raises(ConfigError, match="give model names, or rollout_engine='embedded'"):
        VLLMEngine(0, object(), None, config, "cuda")  # a loaded model: refused first
    with pytest.raises(MissingDependencyError, match=r"langmarl\[vllm\]"):
        MAGRPOConfig(**settings)  # the config says it first, on the driver


def test_rollout_actors_count_in_the_resources_asked() -> None:
    config = MAGRPOConfig(placement="ray", rollout_placement="apart")
    check_resources(MAGRPOConfig(placement="ray"), {"CPU": 2.0})  # with_agent: 2 CPUs fit
    with pytest.raises(ConfigError, match="agent_num_cpus=1 and rollout_num_cpus=1 ask for 4 CPUs"):
        check_resources(config, {"CPU": 2.0})
    check_resources(config.model_copy(update={"agent_num_cpus": 0.5, "rollout_num_cpus": 0.5}),
                    {"CPU": 2.0})  # fmt: skip


# -- the vLLM adapter's parts that need no vLLM ---------------------------------------------------
def test_a_batch_from_token_ids_has_the_embedded_engines_layout(tiny_models) -> None:
    """What vLLM answers (prompt and completion ids) becomes the batch langmarl's generate
    builds: taking one apart and rebuilding it gives it back, tensor for tensor."""
    import torch

    from langmarl.magrpo.placement.engine import EmbeddedEngine
    from langmarl.magrpo.placement.vllm_engine import batch_from_ids, prompt_ids

    models, tokenizers = tiny_models
    config = _config(max_new_tokens=6)
    engine = EmbeddedEngine(0, models[0], tokenizers[0], config, "cpu")
    prompts = ["Hi.", "Name a color, any color you like."]  # two prompt widths
    batch = engine.generate(prompts, 2, False, seed=3)
    ids = prompt_ids(tokenizers[0], prompts, config)
    lengths = batch.completion_mask.sum(dim=1).long().tolist()
    completions = [row[:n].tolist() for row, n in zip(batch.completion_ids, lengths, strict=True)]
    rebuilt = batch_from_ids(ids, completions, 2, tokenizers[0].pad_token_id, tokenizers[0])
    assert rebuilt.prompt_length == batch.prompt_length and rebuilt.texts == batch.texts
    for name in ("sequences", "attention_mask", "completion_mask"):
        assert torch.equal(
            getattr(rebuilt, name), getattr(batch, name).to(getattr(rebuilt, name).dtype)
        ), name


def test_the_adapter_folder_loads_in_peft(tiny_models, tmp_path) -> None:
    """The LoRA adapters vLLM gets are a peft adapter folder: peft loads it into the base
    model and gets the trained adapters back."""
    import json

    import torch
    from peft import PeftModel
    from safetensors.torch import save_file

    from langmarl.magrpo.config import LoRAConfig
    from langmarl.magrpo.placement.vllm_engine import adapter_files
    from langmarl.magrpo.placement.weights import trained_weights
    from langmarl.magrpo.policy import build_agents

    models, tokenizers = tiny_models
    config = _config(lora={"r": 4, "alpha": 8})
    base = copy.deepcopy(models[0])
    (agent,) = build_agents([models[0]], config, tokenizers=[tokenizers[0]])
    _step(agent, config)
    weights = trained_weights(agent.model)
    adapter, tensors = adapter_files(weights, LoRAConfig(r=4, alpha=8), "tiny")
    (tmp_path / "adapter_config.json").write_text(json.dumps(adapter))
    save_file(tensors, str(tmp_path / "adapter_model.safetensors"))
    loaded = dict(PeftModel.from_pretrained(base, str(tmp_path)).named_parameters())
    for name, tensor in weights.items():
        assert torch.equal(loaded[name], tensor), name
