"""Training process for the MAGRPO kill/resume test: two tiny random Llamas, a checkpoint
every step, a reward that sleeps (so a kill lands mid-run). Resumes from the newest
checkpoint when there is one. Usage: magrpo_kill_target.py RUN_DIR STEPS [SLEEP_S]"""

from __future__ import annotations

import sys
import time

import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from langmarl.magrpo.checkpoint import latest_checkpoint
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.policy import embedded_model_dir
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}, {"prompt": "Count."}]


def tiny_agents() -> tuple[list[LlamaForCausalLM], object]:
    """Two 1-layer random Llamas over the embedded model's vocabulary (seed 0), one thread."""
    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=256,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    return [LlamaForCausalLM(config) for _ in range(2)], tokenizer


def sleepy_reward(sleep_s: float):
    """The length-difference reward, sleeping ``sleep_s`` first (so a signal lands mid-step)."""

    def reward(samples):
        time.sleep(sleep_s)
        return [float(len(s.completions[0]) - len(s.completions[1])) / 10 for s in samples]

    return reward


def main(run_dir: str, steps: int, sleep_s: float) -> None:
    models, tokenizer = tiny_agents()
    reward = sleepy_reward(sleep_s)

    args = MAGRPOConfig(
        output_dir=run_dir, num_generations=2, max_new_tokens=4, max_steps=steps,
        save_steps=1, use_chat_template=False, per_device_train_batch_size=1,
        num_train_epochs=steps,
    )  # fmt: skip
    trainer = MAGRPOTrainer(
        models, reward, args, tokenizers=[tokenizer, tokenizer], train_dataset=DATA
    )
    resume = "latest" if latest_checkpoint(trainer.run_dir) is not None else None
    trainer.train(resume_from=resume)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 0.3)
