"""The execution trace of one orchestrator episode: typed records of what happened.

Every PARL input is read off the trace rather than supplied from outside:
``num_subagents`` (sub-agents spawned), ``assigned_subtasks`` (sub-tasks the plan asked
for, including any beyond the ``max_subagents`` cap), ``completed_subtasks`` (sub-agents
that finished with an answer), the stage step counts behind critical and serial steps,
and ``success``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

StageKind = Literal["spawn", "combine"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return self.model_dump(mode="json")


class SubAgentRun(_Record):
    """One sub-agent's work.

    Attributes:
        agent_id: Its id, assigned by the environment (``subagent_1``, …).
        subtask: The question it was given.
        requests: The user messages it received, one per step.
        replies: Its replies, one per step.
        answer: The answer extracted from its replies (``""`` if none).
        answer_marked: Whether the answer came from an ``ANSWER:`` line.
        completed: It finished: a non-empty answer and no failed LLM call.
        error: The failure, if an LLM call failed for good.
        started, finished: Seconds since the episode started (monotonic clock).
    """

    agent_id: str
    subtask: str
    requests: list[str] = Field(default_factory=list)
    replies: list[str] = Field(default_factory=list)
    answer: str = ""
    answer_marked: bool = False
    completed: bool = False
    error: str | None = None
    started: float = 0.0
    finished: float = 0.0

    @property
    def steps(self) -> int:
        """LLM calls this sub-agent made (a failed call counts: it took the time)."""
        return len(self.requests)


class Stage(_Record):
    """One stage: the orchestrator's own steps, then a group of concurrent sub-agents.

    Attributes:
        index: Position in the episode.
        kind: ``spawn`` (plan, then sub-agents) or ``combine`` (final answer, no sub-agents).
        main_steps: The orchestrator's LLM calls in this stage.
        subagents: The sub-agents that ran concurrently in this stage.
    """

    index: int
    kind: StageKind
    main_steps: int = 1
    subagents: list[SubAgentRun] = Field(default_factory=list)

    @property
    def critical_steps(self) -> int:
        """``main_steps + max(sub-agent steps)`` (just ``main_steps`` without sub-agents)."""
        return self.main_steps + max((run.steps for run in self.subagents), default=0)

    @property
    def serial_steps(self) -> int:
        """``main_steps + Σ sub-agent steps``."""
        return self.main_steps + sum(run.steps for run in self.subagents)


class ExecutionTrace(_Record):
    """What happened in one episode.

    Attributes:
        task_id: The task.
        plan_text: The orchestrator's plan, unchanged.
        plan_status: How the plan was parsed (``langmarl.envs.parallel.plan``).
        planned_subtasks: Every sub-task of the plan (before the cap).
        stages: The stages, in order.
        final_answer: The combined answer that was scored.
        combine_status: ``llm`` (the orchestrator combined), ``join`` (the environment
            joined the answers, as configured) or ``join_fallback`` (the combining call
            failed or was empty, so the answers were joined).
        expected: The expected answer of each part of the task.
        part_correct: Per part, whether the final answer got it.
        success_threshold: Accuracy at or above which the episode counts as a success.
        error: An orchestrator failure that ended the episode early, if any.
    """

    task_id: str
    plan_text: str = ""
    plan_status: str = ""
    planned_subtasks: list[str] = Field(default_factory=list)
    stages: list[Stage] = Field(default_factory=list)
    final_answer: str = ""
    combine_status: Literal["llm", "join", "join_fallback", "none"] = "none"
    expected: list[str] = Field(default_factory=list)
    part_correct: list[bool] = Field(default_factory=list)
    success_threshold: float = 1.0
    error: str | None = None

    @property
    def subagent_runs(self) -> list[SubAgentRun]:
        """Every sub-agent, in stage order."""
        return [run for stage in self.stages for run in stage.subagents]

    @property
    def num_subagents(self) -> int:
        """Sub-agents spawned."""
        return len(self.subagent_runs)

    @property
    def assigned_subtasks(self) -> int:
        """Sub-tasks the plan assigned (may exceed ``num_subagents`` past the cap)."""
        return max(len(self.planned_subtasks), self.num_subagents)

    @property
    def completed_subtasks(self) -> int:
        """Sub-agents that completed."""
        return sum(run.completed for run in self.subagent_runs)

    @property
    def accuracy(self) -> float:
        """Share of the task's parts answered correctly (0 for no parts)."""
        return sum(self.part_correct) / len(self.part_correct) if self.part_correct else 0.0

    @property
    def success(self) -> bool:
        """``accuracy >= success_threshold`` and no orchestrator failure."""
        return (
            self.error is None
            and bool(self.part_correct)
            and (self.accuracy >= self.success_threshold)
        )

    @property
    def critical_steps(self) -> int:
        """``Σ_stages (main_steps + max sub-agent steps)``, as ``CriticalStepsMetric``."""
        return sum(stage.critical_steps for stage in self.stages)

    @property
    def serial_steps(self) -> int:
        """The same steps taken one after another."""
        return sum(stage.serial_steps for stage in self.stages)

    def stage_steps(self) -> list[tuple[int, list[int]]]:
        """Per stage ``(main_steps, [steps of each sub-agent])``, for ``pad_stages``."""
        return [(s.main_steps, [run.steps for run in s.subagents]) for s in self.stages]

    def summary(self) -> dict[str, Any]:
        """The numbers PARL and the curves need, as plain values."""
        return {
            "num_subagents": self.num_subagents,
            "assigned_subtasks": self.assigned_subtasks,
            "completed_subtasks": self.completed_subtasks,
            "critical_steps": self.critical_steps,
            "serial_steps": self.serial_steps,
            "accuracy": self.accuracy,
            "success": self.success,
            "plan_status": self.plan_status,
            "combine_status": self.combine_status,
        }
