"""The orchestrator environment with the real embedded model (slow)."""

from __future__ import annotations

import asyncio

import pytest
import torch

from langmarl.envs.parallel.env import ParallelTasksEnv
from langmarl.envs.parallel.reward import parl_inputs
from langmarl.envs.parallel.trace import ExecutionTrace
from langmarl.llm import LLMClient, LLMConfig, UsageLedger
from langmarl.rewards import CriticalStepsMetric, PARLReward

pytestmark = pytest.mark.slow


async def test_embedded_episodes_yield_parl_reward_and_critical_steps() -> None:
    ledger = UsageLedger()
    env = ParallelTasksEnv(
        llm=LLMClient(LLMConfig.from_preset("local"), role="actor", ledger=ledger),
        num_tasks=4, max_subagent_steps=1, plan_max_tokens=32, subagent_max_tokens=8,
        combine_max_tokens=16, seed=3,
    )  # fmt: skip
    tasks = env.sample_tasks(2)
    trajectories = await asyncio.gather(
        *(env.collect_trajectory(env.default_policies(), task) for task in tasks)
    )
    traces = [ExecutionTrace.model_validate(t.metadata["trace"]) for t in trajectories]
    for trace in traces:
        assert trace.plan_text and trace.num_subagents >= 1  # a real plan (or its fallback)
        assert all(run.replies for run in trace.subagent_runs)  # every sub-agent answered
        assert trace.critical_steps == 1 + 1 + 1 <= trace.serial_steps  # plan, subs, combine
    # The reward in the trajectory is the PARL reward of the trace, recomputed here.
    inputs = parl_inputs(traces)
    expected = PARLReward().compute_full_reward(
        inputs["num_subagents"], inputs["trajectory_features"], inputs["success"], 0,
        max_subagents=env.settings.max_subagents,
        completed_subtasks=inputs["completed_subtasks"],
        assigned_subtasks=inputs["assigned_subtasks"],
    )["total_reward"]  # fmt: skip
    assert [t.reward for t in trajectories] == pytest.approx(expected.tolist())
    critical = CriticalStepsMetric()(inputs["main_steps"], inputs["sub_steps"])
    assert critical.tolist() == [t.metadata["critical_steps"] for t in trajectories]
    assert torch.all(critical > 0)
    roles = ledger.by_role()
    assert set(roles) >= {"actor", "subagent"}
