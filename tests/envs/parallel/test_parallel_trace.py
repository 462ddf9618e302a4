"""Trace metrics: counts, critical vs serial steps, agreement with CriticalStepsMetric."""

from __future__ import annotations

import pytest

from langmarl.envs.parallel.reward import parl_inputs, score_traces
from langmarl.envs.parallel.trace import ExecutionTrace, Stage, SubAgentRun
from langmarl.rewards import CriticalStepsMetric, PARLReward


def _run(i: int, steps: int, completed: bool = True) -> SubAgentRun:
    return SubAgentRun(
        agent_id=f"subagent_{i}",
        subtask=f"q{i}",
        requests=["r"] * steps,
        replies=["a"] * steps,
        answer="a" if completed else "",
        completed=completed,
    )


def _trace(runs: list[SubAgentRun], planned: int, correct: list[bool]) -> ExecutionTrace:
    return ExecutionTrace(
        task_id="t",
        planned_subtasks=[f"q{i}" for i in range(planned)],
        stages=[Stage(index=0, kind="spawn", subagents=runs), Stage(index=1, kind="combine")],
        expected=["x"] * len(correct),
        part_correct=correct,
    )


def test_counts_and_steps_come_from_the_runs() -> None:
    trace = _trace([_run(1, 1), _run(2, 2), _run(3, 1, completed=False)], 4, [True, False])
    assert (trace.num_subagents, trace.assigned_subtasks, trace.completed_subtasks) == (3, 4, 2)
    assert trace.critical_steps == 1 + 2 + 1
    assert trace.serial_steps == 1 + 4 + 1
    assert trace.accuracy == 0.5 and not trace.success


def test_trace_steps_agree_with_the_metric() -> None:
    traces = [_trace([_run(1, 2), _run(2, 1)], 2, [True]), _trace([], 0, [False])]
    inputs = parl_inputs(traces)
    metric = CriticalStepsMetric()
    assert metric(inputs["main_steps"], inputs["sub_steps"]).tolist() == [
        t.critical_steps for t in traces
    ]
    assert metric.serial(inputs["main_steps"], inputs["sub_steps"]).tolist() == [
        t.serial_steps for t in traces
    ]


def test_score_traces_uses_the_trace_counts() -> None:
    trace = _trace([_run(1, 1), _run(2, 1, completed=False)], 2, [True, True])
    (row,) = score_traces([trace], PARLReward(), training_step=0, max_subagents=4)
    assert row["r_parallel"] == pytest.approx(0.5)
    assert row["r_finish"] == pytest.approx(0.5)
    assert row["r_perf"] == pytest.approx(1.0)
    assert row["total_reward"] == pytest.approx(0.05 + 0.05 + 1.0)
    assert row["critical_steps"] == 3.0 and row["serial_steps"] == 4.0


def test_serial_episode_gets_no_finish_bonus() -> None:
    (row,) = score_traces([_trace([], 0, [True])], PARLReward(), 0, max_subagents=4)
    assert row["r_parallel"] == 0.0 and row["r_finish"] == 0.0
    assert row["total_reward"] == pytest.approx(1.0)


def test_trace_round_trips_through_json() -> None:
    trace = _trace([_run(1, 2)], 1, [True])
    again = ExecutionTrace.model_validate(trace.to_dict())
    assert again == trace and again.critical_steps == 4
