"""A driver for the Ray placement's end-of-run tests: two tiny random Llamas as Ray actors on
a local Ray this process starts (``ray_address`` null), a reward that sleeps so a signal
lands mid-step, SIGTERM handled as the ``langmarl`` command handles it. Writes ``pids.json``
(the driver's and its actors' pids) into RUN_DIR once the actors run.
Usage: ray_driver_target.py RUN_DIR"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from langmarl.core.signals import stop_on_signals
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.policy import embedded_model_dir
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def main(run_dir: Path) -> None:
    stop_on_signals()  # as the langmarl command does: SIGTERM ends the run "cancelled"
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    models = [LlamaForCausalLM(config) for _ in range(2)]

    def reward(samples):
        time.sleep(1.0)
        return [float(len(s.completions[0]) - len(s.completions[1])) / 10 for s in samples]

    args = MAGRPOConfig(
        output_dir=str(run_dir / "run"), num_generations=2, max_new_tokens=4, max_steps=1000,
        num_train_epochs=1000,
        use_chat_template=False, placement="ray", num_threads=1,
    )  # fmt: skip
    trainer = MAGRPOTrainer(models, reward, args, tokenizers=[tokenizer] * 2, train_dataset=DATA)
    actors = [info["pid"] for info in trainer.placement.details]
    (run_dir / "pids.json").write_text(json.dumps({"driver": os.getpid(), "actors": actors}))
    trainer.train()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
