"""A tiny random Llama over the embedded model's vocabulary, as the orchestrator of PARL GRPO
tests (fast, no real weights); shared by the tests and the kill/resume target process."""

from __future__ import annotations

from typing import Any

import torch
import transformers


def tiny_model() -> tuple[Any, Any]:
    """(model, tokenizer): a 1-layer random Llama with SmolLM2's tokenizer, seeded."""
    from langmarl.magrpo.policy import embedded_model_dir

    tokenizer = transformers.AutoTokenizer.from_pretrained(embedded_model_dir())
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config), tokenizer
