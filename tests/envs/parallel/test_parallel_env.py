"""ParallelTasksEnv with a scripted LLM: concurrency, trace, failures, step API, registry."""

from __future__ import annotations

from typing import Any

import pytest

from langmarl.core.errors import ConfigError, EnvError, LLMError
from langmarl.envs.parallel.env import ParallelTasksEnv
from langmarl.envs.parallel.tasks import ParallelTask, SubTask
from langmarl.envs.registry import make_env
from langmarl.llm.types import ChatRequest
from langmarl.testing import ScriptedLLM

TASK = ParallelTask(
    task_id="t1",
    kind="arithmetic",
    parts=[
        SubTask(question="What is 1 + 2?", answer="3"),
        SubTask(question="What is 2 * 3?", answer="6"),
    ],
)
ANSWERS = {"What is 1 + 2?": "3", "What is 2 * 3?": "6", "What is 4 + 4?": "8"}


def _user(request: ChatRequest) -> str:
    return str(request.messages[-1]["content"])


class Script:
    """Replies by role of the request; records how many sub-agent calls were in flight."""

    def __init__(self, plan: str, combine: str | None = None, fail: str = "") -> None:
        self.plan, self.combine, self.fail = plan, combine, fail
        self.client: Any = None
        self.in_flight_at_first_reply: int | None = None

    def __call__(self, request: ChatRequest) -> str | BaseException:
        user = _user(request)
        if user.startswith("Answer every part") and "Write the plan" in user:
            return self.plan
        if "helpers answered" in user:
            return self.combine if self.combine is not None else "1. 3\n2. 6"
        if self.in_flight_at_first_reply is None:
            self.in_flight_at_first_reply = len(self.client.backend.requests) - 1
        question = user.removeprefix("Question: ")
        if self.fail and self.fail in question:
            return LLMError("scripted", "scripted", "boom")
        return f"ANSWER: {ANSWERS.get(question, '?')}"


def _env(script: Script, **kwargs: Any) -> ParallelTasksEnv:
    client = ScriptedLLM(script, latency=0.02, config=None)
    script.client = client
    return ParallelTasksEnv(llm=client, **kwargs)


async def test_subagents_run_concurrently_and_the_trace_records_them() -> None:
    script = Script("SUBTASK: What is 1 + 2?\nSUBTASK: What is 2 * 3?\nSUBTASK: What is 4 + 4?")
    env = _env(script)
    traj = await env.collect_trajectory(env.default_policies(), TASK.model_dump())
    assert script.in_flight_at_first_reply == 3  # all three asked before any answered
    meta = traj.metadata
    assert (meta["num_subagents"], meta["completed_subtasks"], meta["accuracy"]) == (3, 3, 1.0)
    assert meta["critical_steps"] == 3 and meta["serial_steps"] == 5
    assert meta["success"] and meta["plan_status"] == "plan"
    assert traj.reward == pytest.approx(meta["parl"]["total_reward"])
    assert traj.reward == pytest.approx(0.1 * 3 / 8 + 0.1 * 1.0 + 1.0)
    assert [s.agent_id for s in traj.steps] == [
        "orchestrator", "subagent_1", "subagent_2", "subagent_3", "orchestrator",
    ]  # fmt: skip
    assert traj.agent_ids == ["orchestrator"]


async def test_failed_subagent_is_not_completed_and_lowers_r_finish() -> None:
    env = _env(Script("SUBTASK: What is 1 + 2?\nSUBTASK: What is 2 * 3?", fail="2 * 3"))
    traj = await env.collect_trajectory(env.default_policies(), TASK.model_dump())
    runs = traj.metadata["trace"]["stages"][0]["subagents"]
    assert runs[1]["completed"] is False and "boom" in runs[1]["error"]
    assert traj.metadata["parl"]["r_finish"] == pytest.approx(0.5)


async def test_cap_on_subagents_keeps_extra_subtasks_assigned() -> None:
    plan = "\n".join(["SUBTASK: What is 1 + 2?"] * 5)
    env = _env(Script(plan), max_subagents=2)
    traj = await env.collect_trajectory(env.default_policies(), TASK.model_dump())
    assert traj.metadata["num_subagents"] == 2 and traj.metadata["assigned_subtasks"] == 5
    assert traj.metadata["parl"]["r_finish"] == pytest.approx(2 / 5)


async def test_weak_plan_falls_back_and_empty_combine_joins() -> None:
    env = _env(Script("I think the answers are 3 and 6.", combine="   "))
    traj = await env.collect_trajectory(env.default_policies(), TASK.model_dump())
    assert traj.metadata["plan_status"] == "fallback_parts"
    assert traj.metadata["combine_status"] == "join_fallback"
    assert traj.metadata["accuracy"] == 1.0


async def test_planning_failure_ends_the_episode_with_zero_performance() -> None:
    env = _env(Script(plan="unused"))
    env.llm = ScriptedLLM([LLMError("scripted", "scripted", "down")])
    traj = await env.collect_trajectory(env.default_policies(), TASK.model_dump())
    assert "down" in traj.metadata["trace"]["error"]
    assert traj.metadata["num_subagents"] == 0 and traj.reward == 0.0


async def test_followup_step_when_no_answer_line() -> None:
    replies = iter(["SUBTASK: What is 1 + 2?", "it is three", "ANSWER: 3", "1. 3"])
    env = ParallelTasksEnv(llm=ScriptedLLM(lambda _: next(replies)))
    traj = await env.collect_trajectory(env.default_policies(), TASK.model_dump())
    run = traj.metadata["trace"]["stages"][0]["subagents"][0]
    assert len(run["requests"]) == 2 and run["answer"] == "3" and run["answer_marked"]
    assert traj.metadata["critical_steps"] == 1 + 2 + 1


def test_step_api_runs_plan_then_combine() -> None:
    env = _env(Script(plan="unused"))
    obs = env.reset(TASK.model_dump())
    assert "SUBTASK" in obs["orchestrator"]
    request, reward, done, info = env.step("orchestrator", "SUBTASK: What is 1 + 2?")
    assert not done and "What is 1 + 2? -> 3" in request and info["num_subagents"] == 1
    final, reward, done, info = env.step("orchestrator", "3\n6")
    assert final == "3\n6"
    assert done and info["accuracy"] == 1.0 and reward > 1.0
    with pytest.raises(EnvError, match="reset"):
        env.step("orchestrator", "again")


def test_registry_and_settings_validation() -> None:
    env = make_env("parallel_tasks", task_set="documents", num_tasks=3, combine="join")
    assert env.settings.combine == "join" and env.agent_ids == ["orchestrator"]
    tasks = env.sample_tasks(2, split="eval")
    assert len(tasks) == 2 and "Document:" in tasks[0]["question"]
    with pytest.raises(ConfigError, match="max_subagent"):
        ParallelTasksEnv(max_subagent=3)
    with pytest.raises(EnvError, match="set_llm"):
        env.reset(TASK.model_dump())
        env.step("orchestrator", "SUBTASK: What is 1 + 2?")


async def test_join_scores_the_answers_only_and_single_fallback_is_serial() -> None:
    # the question "What is 6 - 3?" holds the expected 3: unanswered, it must not score
    task = ParallelTask(task_id="t2", kind="arithmetic",
                        parts=[SubTask(question="What is 6 - 3?", answer="3")])  # fmt: skip
    env = _env(Script("SUBTASK: What is 6 - 3?"), combine="join")
    traj = await env.collect_trajectory(env.default_policies(), task.model_dump())
    assert traj.metadata["trace"]["final_answer"] == "?" and traj.metadata["accuracy"] == 0.0
    env = _env(Script("No plan, sorry."), combine="join", plan_fallback="single")
    traj = await env.collect_trajectory(env.default_policies(), TASK.model_dump())
    meta = traj.metadata
    assert meta["plan_status"] == "fallback_single" and meta["num_subagents"] == 1
    assert meta["critical_steps"] == meta["serial_steps"] == 2  # plan + one sub-agent
    with pytest.raises(ConfigError, match="plan_fallback"):
        ParallelTasksEnv(plan_fallback="none")
