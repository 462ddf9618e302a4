"""transformers' own noise stays out of a run's output: the KV cache goes back to the model
under the installed version's name (no FutureWarning per call), and saving and loading
weights print no bar."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from langmarl.llm.local.decoding import decode_loop
from langmarl.llm.local.kv_cache import cache_kwargs, output_cache
from langmarl.llm.local.weights import save_pretrained_quietly


@pytest.fixture(scope="module")
def tiny_llama() -> Any:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    return LlamaForCausalLM(config).eval()


def greedy_without_cache(model: Any, prompt: list[int], steps: int) -> list[int]:
    tokens = list(prompt)
    with torch.inference_mode():
        for _ in range(steps):
            logits = model(input_ids=torch.tensor([tokens]), use_cache=False).logits
            tokens.append(int(logits[0, -1].argmax()))
    return tokens[len(prompt) :]


def test_cached_decoding_matches_full_recompute_without_a_deprecation_warning(
    tiny_llama: Any,
) -> None:
    prompt, steps, picked = [3, 17, 5, 42], 6, []

    def choose(step: int, logits: torch.Tensor, active: torch.Tensor) -> Any:
        tokens = logits.argmax(dim=-1)
        picked.append(int(tokens[0]))
        return tokens, torch.ones_like(active, dtype=torch.bool)

    ids = torch.tensor([prompt])
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        decode_loop(tiny_llama, ids, torch.ones_like(ids), choose, max_steps=steps)
    assert picked == greedy_without_cache(tiny_llama, prompt, steps)


def test_a_wrapper_is_asked_through_its_base_model(tiny_llama: Any) -> None:
    class Wrapper:
        def get_base_model(self) -> Any:
            return tiny_llama

        def forward(self, *args: Any, **kwargs: Any) -> None: ...

    assert cache_kwargs(Wrapper(), "C") == cache_kwargs(tiny_llama, "C")
    assert list(cache_kwargs(tiny_llama, "C").values()) == ["C"]


def test_a_model_that_knows_only_the_old_name_gets_it() -> None:
    class OldModel:
        def forward(self, input_ids: Any, past_key_values: Any = None) -> None: ...

    assert cache_kwargs(OldModel(), "C") == {"past_key_values": "C"}
    assert output_cache(SimpleNamespace(past_key_values="old")) == "old"
    assert output_cache(SimpleNamespace(cache="new", past_key_values=None)) == "new"


def test_saving_and_loading_print_no_progress_bar_and_leave_the_setting_as_it_was(
    tiny_llama: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    from transformers import PreTrainedTokenizerFast
    from transformers.utils import logging as hf_logging

    tokenizer = PreTrainedTokenizerFast(tokenizer_object=_word_tokenizer())
    hf_logging.enable_progress_bar()
    save_pretrained_quietly(tiny_llama, tokenizer, tmp_path / "saved")
    out, err = capfd.readouterr()
    assert "Writing model shards" not in out + err
    assert hf_logging.is_progress_bar_enabled()
    assert (tmp_path / "saved" / "model.safetensors").exists()
    assert (tmp_path / "saved" / "tokenizer.json").exists()

    from langmarl.llm.local.models import load_source, resolve_model
    from langmarl.magrpo.policy import load_causal_lm

    trained, _ = load_causal_lm(str(tmp_path / "saved"))
    served, _ = load_source(resolve_model(str(tmp_path / "saved")))
    out, err = capfd.readouterr()
    assert "Loading weights" not in out + err and hf_logging.is_progress_bar_enabled()
    for model in (trained, served):
        assert torch.equal(model.lm_head.weight, tiny_llama.lm_head.weight)


def _word_tokenizer() -> Any:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel

    return Tokenizer(WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
