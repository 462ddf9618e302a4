"""``rollout_engine="vllm"``: an agent's rollouts sampled by vLLM in its rollout actor, on a GPU.

**Not run yet.** This adapter was written on machines with no GPU and no vLLM (vllm is not
installed there, and has no wheel for their CPUs); it has never sampled. What is tested
without vLLM (``tests/magrpo/test_rollout_engine.py``): the one-line refusal when vllm is
missing or no GPU is reserved, the batch built from token ids, the adapter folder. The
design follows vLLM's RLHF example (an ``LLM`` in a Ray actor, weights pushed after each
update through a worker extension's ``collective_rpc``), for vLLM's ``LLM`` API (0.8 and
later):

- the model loads by name or path in the rollout actor (a loaded model cannot be handed to
  vLLM: refused in one line), with ``enable_lora`` when the run trains LoRA;
- :meth:`VLLMEngine.generate` renders and tokenizes the prompts as langmarl's
  :func:`~langmarl.magrpo.generation.generate` does (chat template, left truncation to
  ``max_prompt_tokens``), hands vLLM the token ids with ``SamplingParams(n=G, seed=...)`` and
  turns the answer's token ids into a :class:`GenerationBatch` of the same layout
  (:func:`batch_from_ids`), so the agent's update scores them unchanged;
- :meth:`VLLMEngine.load_weights`: for full fine-tuning every worker's
  ``model.load_weights`` (which maps Hugging Face names onto vLLM's fused layers), then the
  prefix cache is reset; with LoRA the adapters are written as a peft adapter folder
  (:func:`adapter_files`) and later requests name it with a new ``LoRARequest`` id.

vLLM samples with its own kernels (bf16 by default) and sampler, so its texts are not the
embedded engine's on the same seed, and the update's log-probabilities (the trained fp32
model's) are those of a slightly different policy: the off-policy gap every vLLM-based
trainer has, not corrected by importance weights here.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.llm.local.models import EMBEDDED_NAMES
from langmarl.magrpo.config import LoRAConfig, TrainerConfig
from langmarl.magrpo.generation import GenerationBatch, render_prompt
from langmarl.magrpo.placement.weights import nbytes
from langmarl.magrpo.policy import embedded_model_dir

if TYPE_CHECKING:
    import torch

GPU_MEMORY_SHARE = 0.85
"""Of the GPU memory the rollout actor reserves (``rollout_num_gpus``, at most 1), the share
vLLM may take for weights and KV cache (its own default is 0.9 of the whole device)."""
EXTENSION = "langmarl.magrpo.placement.vllm_engine.WeightLoader"
"""vLLM's ``worker_extension_cls``: the method :meth:`VLLMEngine.load_weights` calls."""


def vllm_module() -> Any:
    """``import vllm``, or the error that names the extra."""
    try:
        import vllm
    except ImportError:
        raise MissingDependencyError("vllm", "vllm", "rollout_engine='vllm'") from None
    return vllm


def prompt_ids(tokenizer: Any, prompts: Sequence[str], config: TrainerConfig) -> list[list[int]]:
    """Each prompt's token ids as :func:`~langmarl.magrpo.generation.generate` feeds them
    (rendered with the chat template when asked, truncated from the left), unpadded."""
    rendered = [render_prompt(tokenizer, p, config.use_chat_template) for p in prompts]
    tokenizer.truncation_side = "left"
    encoded = tokenizer(rendered, truncation=True, max_length=config.max_prompt_tokens,
                        add_special_tokens=False)  # fmt: skip
    return [list(ids) for ids in encoded["input_ids"]]


def batch_from_ids(
    prompts: Sequence[Sequence[int]],
    completions: Sequence[Sequence[int]],
    num_generations: int,
    pad_id: int,
    tokenizer: Any,
) -> GenerationBatch:
    """A :class:`GenerationBatch` from token ids: prompts left-padded to one width P,
    completion ``r`` (of prompt ``r // G``) after them, padded on the right to the longest
    (at least 1); the completion mask covers exactly the tokens the engine generated (its
    stop token included when it returned one)."""
    import torch

    width = max(len(ids) for ids in prompts)
    length = max(1, *(len(ids) for ids in completions))
    sequences = torch.full((len(completions), width + length), pad_id, dtype=torch.long)
    attention = torch.zeros_like(sequences)
    mask = torch.zeros((len(completions), length))
    for row, completion in enumerate(completions):
        prompt = prompts[row // num_generations]
        sequences[row, width - len(prompt) : width] = torch.tensor(prompt, dtype=torch.long)
        sequences[row, width : width + len(completion)] = torch.tensor(completion, dtype=torch.long)
        attention[row, width - len(prompt) : width + len(completion)] = 1
        mask[row, : len(completion)] = 1.0
    texts = [tokenizer.decode(list(ids), skip_special_tokens=True).strip() for ids in completions]
    return GenerationBatch(sequences, attention, width, mask, texts)


def adapter_files(
    weights: Mapping[str, torch.Tensor], lora: LoRAConfig, base: str
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """``(adapter_config.json's content, adapter_model.safetensors' tensors)`` of a peft LoRA
    adapter folder holding ``weights`` (a peft model's trainable parameters: their adapter
    name, ``.default``, dropped as peft's ``save_pretrained`` drops it)."""
    config = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": lora.r,
              "lora_alpha": lora.alpha, "lora_dropout": lora.dropout, "bias": "none",
              "target_modules": list(lora.target_modules),
              "base_model_name_or_path": base}  # fmt: skip
    tensors = {name.replace(".default.", "."): t.contiguous() for name, t in weights.items()}
    return config, tensors


class WeightLoader:
    """Mixed into vLLM's GPU workers (``worker_extension_cls``): loads pushed weights."""

    model_runner: Any

    def langmarl_load_weights(self, items: list[tuple[str, Any]]) -> None:
        self.model_runner.model.load_weights(weights=items)


class VLLMEngine:
    """A :class:`~langmarl.magrpo.placement.engine.RolloutEngine` on vLLM (see the module)."""

    def __init__(
        self, index: int, source: Any, tokenizer: Any, config: TrainerConfig, device: str
    ) -> None:
        if not isinstance(source, str):
            raise ConfigError(
                f"rollout_engine='vllm' loads each agent's model by name or path, but agent-"
                f"{index} was given a loaded model: give model names, or "
                "rollout_engine='embedded'"
            )
        vllm = vllm_module()
        from transformers import AutoTokenizer

        self.path = embedded_model_dir() if source in EMBEDDED_NAMES else source
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.config, self.index, self.version = config, index, 0
        self.folder = Path(tempfile.mkdtemp(prefix=f"langmarl-vllm-{index}-"))
        lora = config.lora
        options = {"enable_lora": True, "max_lora_rank": lora.r, "max_loras": 1} if lora else {}
        share = GPU_MEMORY_SHARE * min(1.0, config.rollout_num_gpus)
        self.llm = vllm.LLM(model=self.path, seed=config.seed, worker_extension_cls=EXTENSION,
                            gpu_memory_utilization=share, **options)  # fmt: skip
        self.lora_request: Any = None

    def generate(
        self, prompts: Sequence[str], num_generations: int, greedy: bool, seed: int
    ) -> GenerationBatch:
        vllm, config = vllm_module(), self.config
        ids = prompt_ids(self.tokenizer, prompts, config)
        params = vllm.SamplingParams(
            n=num_generations, seed=int(seed), max_tokens=config.max_new_tokens,
            temperature=0.0 if greedy else config.temperature,
            top_p=1.0 if greedy else config.top_p,
            top_k=-1 if greedy or config.top_k is None else config.top_k,
        )  # fmt: skip
        outputs = self.llm.generate([{"prompt_token_ids": p} for p in ids], params,
                                    lora_request=self.lora_request, use_tqdm=False)  # fmt: skip
        completions = [list(c.token_ids) for output in outputs for c in output.outputs]
        pad = int(self.tokenizer.pad_token_id)
        return batch_from_ids(ids, completions, num_generations, pad, self.tokenizer)

    def load_weights(self, weights: Mapping[str, torch.Tensor]) -> int:
        if self.config.lora is None:
            self.llm.collective_rpc("langmarl_load_weights", args=(list(weights.items()),))
            self.llm.reset_prefix_cache()  # cached prompts' KV came from the old weights
            return nbytes(weights)
        from safetensors.torch import save_file
        from vllm.lora.request import LoRARequest

        self.version += 1
        shutil.rmtree(self.folder / f"v{self.version - 1}", ignore_errors=True)
        folder = self.folder / f"v{self.version}"
        folder.mkdir()
        adapter, tensors = adapter_files(weights, self.config.lora, self.path)
        (folder / "adapter_config.json").write_text(json.dumps(adapter))
        save_file(tensors, str(folder / "adapter_model.safetensors"))
        name = f"agent-{self.index}-v{self.version}"
        self.lora_request = LoRARequest(name, self.version, str(folder))
        return nbytes(weights)
