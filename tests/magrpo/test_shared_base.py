"""LoRA agents named by the same model share its frozen base, in training and in their
``w16`` sampling copies; each keeps its own adapters, and the numbers are those of agents
that each loaded their own copy."""

import gc

import pytest
import torch

from langmarl.llm.local.weight_only import Fp16Linear
from langmarl.magrpo import sampler as sampler_module
from langmarl.magrpo.config import LoRAConfig, MAGRPOConfig
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def _reward(samples):
    return [float(sum(map(ord, "".join(s.completions))) % 13) for s in samples]


@pytest.fixture
def tiny_dirs(tiny_models, tmp_path):
    """Two directories holding the tiny Llama (the same weights twice) and its tokenizer."""
    (model, tokenizer), dirs = (tiny_models[0][0], tiny_models[1][0]), []
    for name in ("a", "b"):
        model.save_pretrained(tmp_path / name)
        tokenizer.save_pretrained(tmp_path / name)
        dirs.append(str(tmp_path / name))
    return dirs


def _trainer(models, tmp_path, **overrides):
    settings = {
        "output_dir": str(tmp_path / "run"), "num_generations": 2, "max_new_tokens": 6,
        "max_steps": 1, "use_chat_template": False, "lora": LoRAConfig(r=4, alpha=8),
        "sampling_precision": "w16", "temperature": 1.0, "num_threads": 1, **overrides,
    }  # fmt: skip
    return MAGRPOTrainer(models, _reward, MAGRPOConfig(**settings), train_dataset=DATA)


def _frozen(model):
    return {name: p for name, p in model.named_parameters() if not p.requires_grad}


def _adapters(model):
    return {name: p for name, p in model.named_parameters() if p.requires_grad}


def _base_layers(twin):
    return [m for n, m in twin.named_modules() if n.endswith("base_layer") or n.endswith("lm_head")]


def test_lora_agents_of_one_model_share_its_base_and_train_their_own_adapters(tiny_dirs, tmp_path):
    shared = _trainer([tiny_dirs[0], tiny_dirs[0]], tmp_path / "shared")
    own = _trainer(tiny_dirs, tmp_path / "own")  # two paths: each agent loads its own copy
    first, second = (agent.model for agent in shared.agents)
    frozen = _frozen(first)
    assert frozen and all(_frozen(second)[n] is p for n, p in frozen.items())
    assert all(
        _frozen(own.agents[1].model)[n] is not p for n, p in _frozen(own.agents[0].model).items()
    )
    before = {n: p.detach().clone() for n, p in frozen.items()}
    adapters = [_adapters(model) for model in (first, second)]
    started = {n: p.detach().clone() for n, p in adapters[0].items()}
    assert all(adapters[1][n] is not p for n, p in adapters[0].items())  # their own tensors
    assert any(not torch.equal(adapters[1][n], p) for n, p in adapters[0].items())  # seeded apart

    twins = [agent.sampler.model_for(agent.model) for agent in shared.agents]
    layers = [_base_layers(twin) for twin in twins]
    assert layers[0] and all(isinstance(layer, Fp16Linear) for layer in layers[0])
    assert all(a is b for a, b in zip(*layers, strict=True))  # packed once for both
    own_twins = [agent.sampler.model_for(agent.model) for agent in own.agents]
    assert all(a is not b for a, b in zip(*map(_base_layers, own_twins), strict=True))
    ids = torch.tensor([[5, 17, 300, 42, 7]])
    with torch.no_grad():
        for twin, alone in zip(twins, own_twins, strict=True):
            assert torch.equal(twin(input_ids=ids).logits, alone(input_ids=ids).logits)

    torch.manual_seed(3)
    shared_history = shared.train()
    torch.manual_seed(3)
    own_history = own.train()
    for key in ("agent-0/loss", "agent-1/loss", "reward_mean"):
        assert shared_history[0][key] == own_history[0][key]
    for agent, alone in zip(shared.agents, own.agents, strict=True):
        mine = _adapters(agent.model)
        assert all(torch.equal(mine[n], p) for n, p in _adapters(alone.model).items())
    assert all(torch.equal(p, before[n]) for n, p in frozen.items())  # the base never moved
    assert any(not torch.equal(p, started[n]) for n, p in _adapters(first).items())  # trained


def test_fully_trained_agents_each_load_their_own_weights(tiny_dirs, tmp_path):
    trainer = _trainer([tiny_dirs[0], tiny_dirs[0]], tmp_path, lora=None, sampling_precision="fp32")
    first, second = (dict(agent.model.named_parameters()) for agent in trainer.agents)
    assert first and all(second[n] is not p for n, p in first.items())


def test_a_shared_pack_goes_with_the_last_model_that_holds_its_weights(tiny_dirs, tmp_path):
    trainer = _trainer([tiny_dirs[0], tiny_dirs[0]], tmp_path)
    twins = [agent.sampler.model_for(agent.model) for agent in trainer.agents]
    packs = sampler_module._FROZEN_FP16
    assert packs is not None
    weights = [m.weight for m in trainer.agents[0].model.modules()
               if isinstance(m, torch.nn.Linear) and not m.weight.requires_grad]  # fmt: skip
    assert weights and all(packs.get(w) is not None for w in weights)
    held, ours = len(packs), len({id(w) for w in weights})
    del trainer, twins, weights
    gc.collect()
    assert len(packs) <= held - ours  # this run's packs are gone (other tests' may remain)
