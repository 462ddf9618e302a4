"""A language-space PARL run is recorded as kind parl_language and listed as such."""

from __future__ import annotations

from pathlib import Path

from langmarl.envs.parallel.env import make_parallel_tasks
from langmarl.parl.config import ParallelTasksConfig
from langmarl.store.catalog import find_runs
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import MonteCarloTrainer
from tests.parl.test_parl_language import _reply


def test_parl_language_run_is_listed_with_its_kind(tmp_path: Path) -> None:
    config = ParallelTasksConfig(
        exp_name="parl", experiment_dir=str(tmp_path), num_iterations=1,
        trajectories_per_iteration=2, seed=1,
    )  # fmt: skip
    llm = ScriptedLLM(_reply, config=scripted_config(max_retries=0))
    env = make_parallel_tasks(config, llm=llm)
    MonteCarloTrainer(
        config, env, CentralizedCritic(config, llm=llm),
        PolicyGradientOptimizer(scripted_config(), llm=llm),
        callbacks=env.training_callbacks(),
    ).train()  # fmt: skip
    [summary] = find_runs(tmp_path)
    assert (summary.kind, summary.status, summary.progress) == (
        "parl_language", "completed", "1/1 iterations"
    )  # fmt: skip
