"""Running one orchestrator episode: plan → concurrent sub-agents → combine.

The sub-agents of a stage are started together and awaited with ``asyncio.gather``, so
with the embedded model their requests are batched into one ``generate`` call and with a
remote endpoint they are in flight at the same time. Every step is recorded in an
:class:`~langmarl.envs.parallel.trace.ExecutionTrace`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from langmarl.core.errors import LLMError
from langmarl.envs.parallel import prompts
from langmarl.envs.parallel.plan import PlanFallback, parse_plan
from langmarl.envs.parallel.scoring import extract_answer, score_parts
from langmarl.envs.parallel.tasks import ParallelTask
from langmarl.envs.parallel.trace import ExecutionTrace, Stage, SubAgentRun
from langmarl.llm.client import LLMClient
from langmarl.llm.types import Message

Clock = Callable[[], float]


class EpisodeSettings(BaseModel):
    """How an episode runs (the environment's knobs)."""

    model_config = ConfigDict(extra="forbid")

    max_subagents: int = Field(default=8, ge=1)
    """Sub-agents spawned at most; plan lines beyond it are assigned but never run."""
    max_subagent_steps: int = Field(default=2, ge=1)
    """LLM calls per sub-agent at most (a reply without ``ANSWER:`` earns a follow-up)."""
    combine: Literal["llm", "join"] = "llm"
    """``llm``: the orchestrator writes the final answer; ``join``: the environment joins the
    sub-agents' answers, one per line (for training the plan alone; see ``answer_lines``)."""
    plan_fallback: PlanFallback = "parts"
    """What an unparseable plan runs: ``parts``: one sub-agent per numbered part of the task
    (rescues a weak orchestrator); ``single``: one sub-agent for the whole task, so
    parallelism has to come from the plan (set it when the plan format is being trained)."""
    success_threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    """Accuracy at or above which an episode is a success."""
    plan_max_tokens: int = Field(default=96, ge=1)
    """Length limit of the plan."""
    subagent_max_tokens: int = Field(default=48, ge=1)
    """Length limit of each sub-agent reply."""
    combine_max_tokens: int = Field(default=96, ge=1)
    """Length limit of the final answer."""
    subagent_policy: str = prompts.SUBAGENT_POLICY
    """The frozen sub-agents' system prompt."""


def subagent_id(index: int) -> str:
    """The id of the ``index``-th sub-agent (0-based) of an episode."""
    return f"subagent_{index + 1}"


def _messages(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def run_subagent(
    client: LLMClient,
    agent_id: str,
    subtask: str,
    task: ParallelTask,
    settings: EpisodeSettings,
    clock: Clock,
) -> SubAgentRun:
    """One sub-agent: ask, and ask once more for an ``ANSWER:`` line if it gave none."""
    context = f"Document: {task.context}\n" if task.context else ""
    first = prompts.SUBAGENT_REQUEST.format(context=context, question=subtask)
    run = SubAgentRun(agent_id=agent_id, subtask=subtask, started=clock())
    messages = _messages(settings.subagent_policy, first)
    for _ in range(settings.max_subagent_steps):
        run.requests.append(messages[-1]["content"])
        try:
            result = await client.acomplete(messages, max_tokens=settings.subagent_max_tokens)
        except LLMError as exc:
            run.error = str(exc)
            break
        run.replies.append(result.text)
        answer, marked = extract_answer(result.text)
        if marked or not run.answer:
            run.answer, run.answer_marked = answer, marked
        if marked:
            break
        messages += [
            {"role": "assistant", "content": result.text},
            {"role": "user", "content": prompts.SUBAGENT_FOLLOWUP},
        ]
    run.completed = bool(run.answer) and run.error is None
    run.finished = clock()
    return run


async def run_stage(
    client: LLMClient,
    subtasks: list[str],
    task: ParallelTask,
    settings: EpisodeSettings,
    clock: Clock,
    *,
    index: int = 0,
) -> Stage:
    """Spawn one sub-agent per sub-task and run them concurrently."""
    runs = await asyncio.gather(
        *(
            run_subagent(client, subagent_id(i), subtask, task, settings, clock)
            for i, subtask in enumerate(subtasks)
        )
    )
    return Stage(index=index, kind="spawn", main_steps=1, subagents=list(runs))


def joined_answers(stage: Stage) -> str:
    """``sub-task -> answer`` lines, in plan order (what the combining orchestrator reads)."""
    return "\n".join(f"{run.subtask} -> {run.answer}" for run in stage.subagents)


def answer_lines(stage: Stage) -> str:
    """The sub-agents' answers, one per line, in plan order: the final answer of a join.

    The sub-task text is left out on purpose: it is the question, not an answer, and its
    numbers would be scored as one (``What is 6 - 3? ->`` with no answer would match 3).
    """
    return "\n".join(run.answer for run in stage.subagents)


async def combine(
    orchestrator: LLMClient | None,
    policy: str,
    task: ParallelTask,
    stage: Stage,
    settings: EpisodeSettings,
) -> tuple[str, Literal["llm", "join", "join_fallback"]]:
    """The final answer and how it was made (see ``ExecutionTrace.combine_status``)."""
    if settings.combine == "join" or orchestrator is None:
        return answer_lines(stage), "join"
    request = prompts.COMBINE_REQUEST.format(task=task.prompt, answers=joined_answers(stage))
    try:
        reply = await orchestrator.acomplete(
            _messages(policy, request), max_tokens=settings.combine_max_tokens
        )
    except LLMError:
        return answer_lines(stage), "join_fallback"
    return (reply.text, "llm") if reply.text.strip() else (answer_lines(stage), "join_fallback")


async def execute_plan(
    task: ParallelTask,
    plan_text: str,
    *,
    subagent_llm: LLMClient,
    orchestrator_llm: LLMClient | None = None,
    policy: str = prompts.ORCHESTRATOR_POLICY,
    settings: EpisodeSettings | None = None,
    clock: Clock | None = None,
) -> ExecutionTrace:
    """Run an episode from a given plan (e.g. one sampled from a model being trained).

    Without ``orchestrator_llm`` the answers are joined instead of combined by an LLM (and
    the combine stage then takes no orchestrator step).
    """
    settings = settings or EpisodeSettings()
    plan = parse_plan(plan_text, task.prompt, settings.plan_fallback)
    stage = await run_stage(
        subagent_llm, plan.subtasks[: settings.max_subagents], task, settings,
        clock or _episode_clock(),
    )  # fmt: skip
    final, status = await combine(orchestrator_llm, policy, task, stage, settings)
    return build_trace(task, plan_text, stage, final, status, settings)


def build_trace(
    task: ParallelTask,
    plan_text: str,
    stage: Stage,
    final_answer: str,
    combine_status: Literal["llm", "join", "join_fallback"],
    settings: EpisodeSettings,
) -> ExecutionTrace:
    """The trace of an episode whose spawn stage ran and whose final answer is known."""
    plan = parse_plan(plan_text, task.prompt, settings.plan_fallback)
    main_steps = 0 if combine_status == "join" else 1
    expected = [part.answer for part in task.parts]
    return ExecutionTrace(
        task_id=task.task_id,
        plan_text=plan_text,
        plan_status=plan.status,
        planned_subtasks=plan.subtasks,
        stages=[stage, Stage(index=1, kind="combine", main_steps=main_steps)],
        final_answer=final_answer,
        combine_status=combine_status,
        expected=expected,
        part_correct=score_parts(expected, final_answer),
        success_threshold=settings.success_threshold,
    )


async def run_episode(
    task: ParallelTask,
    *,
    orchestrator_llm: LLMClient,
    subagent_llm: LLMClient,
    policy: str = prompts.ORCHESTRATOR_POLICY,
    settings: EpisodeSettings | None = None,
) -> ExecutionTrace:
    """A whole episode: the orchestrator plans, the sub-agents run, the orchestrator combines.

    A failed planning call ends the episode with ``trace.error`` set (one orchestrator step,
    no sub-agents, nothing correct).
    """
    settings = settings or EpisodeSettings()
    clock = _episode_clock()
    request = prompts.PLAN_REQUEST.format(task=task.prompt)
    try:
        plan = await orchestrator_llm.acomplete(
            _messages(policy, request), max_tokens=settings.plan_max_tokens
        )
    except LLMError as exc:
        return ExecutionTrace(
            task_id=task.task_id,
            stages=[Stage(index=0, kind="spawn", main_steps=1)],
            expected=[part.answer for part in task.parts],
            part_correct=[False] * len(task.parts),
            success_threshold=settings.success_threshold,
            error=str(exc),
        )
    return await execute_plan(
        task,
        plan.text,
        subagent_llm=subagent_llm,
        orchestrator_llm=orchestrator_llm,
        policy=policy,
        settings=settings,
        clock=clock,
    )


def _episode_clock() -> Clock:
    start = time.monotonic()
    return lambda: time.monotonic() - start
