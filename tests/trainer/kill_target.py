"""Training process for the kill/resume test: the real language env and trainer with a
scripted LLM (a latency per call, so kills land mid-iteration and the run outlasts the
kills however fast the machine). Usage: kill_target.py RUN_DIR N [LATENCY_S]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from trainer_fakes import qa_team_reply

from langmarl.config import LanguageTaskConfig
from langmarl.envs.language.env import LanguageEnv
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import MonteCarloTrainer


def main() -> None:
    run_dir, iterations = Path(sys.argv[1]), int(sys.argv[2])
    latency = float(sys.argv[3]) if len(sys.argv) > 3 else 0.1
    config = LanguageTaskConfig(
        exp_name="killed",
        task_type="qa",
        num_iterations=iterations,
        trajectories_per_iteration=4,
        runs_dir=str(run_dir),
        checkpoint_dir=str(run_dir / "ckpt"),
        seed=7,
        optimizer_workers=4,
    )
    llm = ScriptedLLM(qa_team_reply, latency=latency, config=scripted_config(max_retries=0))
    env = LanguageEnv(config, llm=llm)
    critic = CentralizedCritic(config, llm=llm)
    optimizer = PolicyGradientOptimizer(scripted_config(), llm=llm)
    MonteCarloTrainer(config, env, critic, optimizer).train()


if __name__ == "__main__":
    main()
