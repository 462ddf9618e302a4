"""Training process for the PARL GRPO kill/resume test: a tiny random orchestrator with a
LoRA adapter, scripted sub-agents with a latency (so a kill lands mid-run), a checkpoint
every step; resumes from the newest one when there is one.
Usage: parl_grpo_kill_target.py OUTPUT_DIR STEPS [LATENCY_S]"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from tiny_orchestrator import tiny_model

from langmarl.envs.parallel.env import ParallelTasksEnv
from langmarl.magrpo.checkpoint import latest_checkpoint
from langmarl.magrpo.config import LoRAConfig
from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig
from langmarl.testing import ScriptedLLM, scripted_config


def main(output_dir: str, steps: int, latency: float) -> None:
    torch.set_num_threads(1)
    model, tokenizer = tiny_model()
    subagents = ScriptedLLM(lambda r: "ANSWER: 3", latency=latency,
                            config=scripted_config(max_retries=0))  # fmt: skip
    env = ParallelTasksEnv(num_tasks=2, subagent_llm=subagents, max_subagent_steps=1,
                           combine="join", plan_fallback="single")  # fmt: skip
    grpo = OrchestratorGRPOConfig(
        num_steps=steps, num_generations=2, max_new_tokens=6, learning_rate=1e-2,
        lora=LoRAConfig(r=2, alpha=4), output_dir=output_dir, num_threads=1,
    )  # fmt: skip
    trainer = OrchestratorGRPO(env, grpo, model=model, tokenizer=tokenizer)
    resume = "latest" if latest_checkpoint(Path(output_dir)) is not None else None
    trainer.train(resume_from=resume)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else 0.2)
