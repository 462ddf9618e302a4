"""Fixtures: a tiny random Llama with the embedded model's tokenizer (fast, no real weights)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def smol_tokenizer():
    from transformers import AutoTokenizer

    from langmarl.magrpo.policy import embedded_model_dir

    return AutoTokenizer.from_pretrained(embedded_model_dir())


@pytest.fixture
def tiny_models(smol_tokenizer):
    """Two (model, tokenizer) pairs of a 1-layer random Llama over SmolLM2's vocabulary."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(smol_tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
        eos_token_id=smol_tokenizer.eos_token_id,
        pad_token_id=smol_tokenizer.pad_token_id,
    )
    return [LlamaForCausalLM(config) for _ in range(2)], [smol_tokenizer, smol_tokenizer]
