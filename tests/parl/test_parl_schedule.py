"""λ is annealed in one place: the same settings give the same λ at every step in language
space (``PARLCallback`` → ``ParallelTasksEnv``) and weight space (the loop → the scorer of
``OrchestratorGRPO``), equal to the linear schedule."""

from __future__ import annotations

import pytest
from tiny_orchestrator import tiny_model

from langmarl.envs.parallel.env import make_parallel_tasks
from langmarl.envs.parallel.trace import ExecutionTrace, Stage, SubAgentRun
from langmarl.parl.callbacks import PARLCallback
from langmarl.parl.config import ParallelTasksConfig
from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig

LAMBDAS = {"lambda1_init": 0.4, "lambda1_final": 0.1, "lambda2_init": 0.2, "lambda2_final": 0.6}


def _trace() -> ExecutionTrace:
    run = SubAgentRun(agent_id="subagent_1", subtask="1 + 2", requests=["1 + 2"],
                      replies=["ANSWER: 3"], answer="3", completed=True)  # fmt: skip
    return ExecutionTrace(task_id="t", stages=[Stage(index=0, kind="spawn", subagents=[run])],
                          expected=["3"], part_correct=[True])  # fmt: skip


def _expected(init: float, final: float, step: int, total: int) -> float:
    return init + (final - init) * min(1.0, max(0.0, step / total))


@pytest.mark.parametrize("anneal_steps", [None, 2])
def test_lambda_at_each_step_is_the_schedule_in_both_spaces(tmp_path, anneal_steps) -> None:
    language = ParallelTasksConfig(num_iterations=4, anneal_steps=anneal_steps, **LAMBDAS)
    env = make_parallel_tasks(language)
    callback = PARLCallback(env)
    model, tokenizer = tiny_model()
    weight = OrchestratorGRPOConfig(num_steps=4, anneal_steps=anneal_steps,
                                    output_dir=str(tmp_path), **LAMBDAS)  # fmt: skip
    grpo = OrchestratorGRPO(env, weight, model=model, tokenizer=tokenizer)
    total = anneal_steps or 4
    for step in (-1, 0, 1, 2, 3, 4, 7):
        callback.on_iteration_start(step, trainer=None)  # type: ignore[arg-type]
        grpo.reward_func.set_step(step)  # what the loop does before each step
        spoken = env.parl_terms([_trace()])[0]
        trained = grpo.reward_func([_trace()])[0]
        assert env.training_step == step
        for name in ("lambda1", "lambda2"):
            want = _expected(LAMBDAS[f"{name}_init"], LAMBDAS[f"{name}_final"], step, total)
            assert spoken[name] == pytest.approx(want) and trained[name] == pytest.approx(want)
        assert spoken["total_reward"] == pytest.approx(trained["total_reward"])
