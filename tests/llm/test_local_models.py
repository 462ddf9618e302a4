"""Any causal LM in process: ``model_string`` names the embedded model, a directory, a
weight-space checkpoint's agent folder (a LoRA adapter) or a hub id."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.llm.local.models import ModelSource, resolve_model
from langmarl.llm.local.weights import MODEL_NAME


@pytest.mark.parametrize("name", [None, "", "smollm2", "local", MODEL_NAME])
def test_the_embedded_names(name: str | None) -> None:
    assert resolve_model(name) == ModelSource("embedded", "")
    assert resolve_model(name).label == MODEL_NAME


def test_directories_adapters_and_hub_ids(tmp_path: Path) -> None:
    full, adapter = tmp_path / "full", tmp_path / "adapter"
    full.mkdir(), adapter.mkdir()
    (full / "config.json").write_text("{}")
    (adapter / "adapter_config.json").write_text("{}")
    assert resolve_model(str(full)) == ModelSource("directory", str(full.resolve()))
    assert resolve_model(str(adapter)).kind == "adapter"
    assert resolve_model("HuggingFaceTB/SmolLM2-360M-Instruct") == ModelSource(
        "hub", "HuggingFaceTB/SmolLM2-360M-Instruct"
    )


def test_what_is_not_a_model_says_why(tmp_path: Path) -> None:
    step = tmp_path / "checkpoints" / "step-000002"
    (step / "agent-0").mkdir(parents=True)
    (step / "agent-1").mkdir()
    with pytest.raises(ConfigError, match=r"one model per agent.*agent-0"):
        resolve_model(str(step))
    for wrong in (str(tmp_path / "missing"), "./nope", "not a model"):
        with pytest.raises(ConfigError, match="neither a model directory nor a Hugging Face"):
            resolve_model(wrong)


@pytest.mark.slow
def test_an_agent_trained_in_weight_space_acts_through_the_client(tmp_path: Path) -> None:
    """A tiny MAGRPO run on the embedded model (LoRA, a large learning rate so the adapter
    moves the weights); its agent-0 folder is then the model of an LLMClient: the engine's
    weights are the base plus the trained adapter, and a request is answered by it."""
    import torch
    from safetensors import safe_open

    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig
    from langmarl.llm.local.backend import LocalBackend
    from langmarl.magrpo.config import LoRAConfig, MAGRPOConfig
    from langmarl.magrpo.policy import embedded_model_dir
    from langmarl.magrpo.trainer import MAGRPOTrainer

    config = MAGRPOConfig(
        output_dir=str(tmp_path / "run"), num_agents=1, num_generations=2, max_new_tokens=4,
        max_steps=1, num_threads=1, learning_rate=0.05, lora=LoRAConfig(r=4, alpha=8),
    )  # fmt: skip
    rewards = iter(range(100))  # different rewards per sample: a non-zero advantage
    MAGRPOTrainer(
        ["smollm2"], lambda samples: [float(next(rewards)) for _ in samples], config,
        train_dataset=[{"prompt": "Say hi."}],
    ).train()  # fmt: skip
    agent = tmp_path / "run" / "checkpoints" / "step-000001" / "agent-0"
    assert (agent / "adapter_config.json").is_file()

    llm = LLMConfig.from_preset("local").model_copy(
        update={"model_string": str(agent), "max_tokens": 8, "temperature": 0.0}
    )
    backend = LocalBackend(llm)
    client = LLMClient(llm, backend=backend)
    text, usage = client.chat_with_usage("", "Say hi.")
    assert usage["output"] >= 1 and isinstance(text, str)
    assert backend.engine.model_name == str(agent.resolve())

    served = dict(backend.engine.model.named_parameters())
    name = next(k for k in served if k.endswith("self_attn.q_proj.weight"))
    # the base's own tensor, read from the embedded model's file (not a third model load)
    with safe_open(Path(embedded_model_dir()) / "model.safetensors", "pt") as weights:
        original = weights.get_tensor(name)
    assert served[name].shape == original.shape
    assert not torch.equal(served[name], original), "the adapter was not merged in"
    backend.engine.close()
