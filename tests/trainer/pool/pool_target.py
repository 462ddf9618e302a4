"""Training process of the pool kill/resume test: PosterEnv and PoolTrainer with the
scripted poster model (a latency per call, so kills land inside rounds).
Usage: pool_target.py RUNS_DIR RUN_ID ROUNDS [LATENCY_S]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from poster_fakes import poster_reply

from langmarl.config.envs import PosterConfig
from langmarl.envs.poster.env import PosterEnv
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer.pool.search import PoolTrainer

TOPICS = [
    f"topic {word}"
    for word in ["ocean", "coffee", "moon", "river", "bread", "cat", "snow", "tea", "lamp", "kite"]
]


def make_trainer(
    runs: Path, run_id: str, rounds: int, latency: float, children: int = 3
) -> PoolTrainer:
    config = PosterConfig(
        exp_name=run_id,
        search="pool",
        num_iterations=rounds,
        trajectories_per_iteration=8,
        validation_size=3,
        num_eval=2,
        runs_dir=str(runs),
        checkpoint_dir=str(runs / "ck"),
        seed=3,
        pool={"children": children, "samples_per_task": 2, "max_demonstrations": 2},
    )
    llm = ScriptedLLM(poster_reply, latency=latency, config=scripted_config(max_retries=0))
    env = PosterEnv(config, topics=TOPICS, llm=llm)
    critic = CentralizedCritic(config, llm=llm)
    optimizer = PolicyGradientOptimizer(scripted_config(), llm=llm)
    return PoolTrainer(config, env, critic, optimizer, callbacks=[])


if __name__ == "__main__":
    latency = float(sys.argv[4]) if len(sys.argv) > 4 else 0.05
    make_trainer(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), latency).train()
