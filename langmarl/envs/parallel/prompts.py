"""Prompts of the orchestrator/sub-agent environment (data, filled by the runner)."""

from __future__ import annotations

ORCHESTRATOR_POLICY = (
    "You are the orchestrator. Split the task into independent sub-tasks that helpers can "
    "solve at the same time, one helper per sub-task. Write one line per sub-task in the "
    "form 'SUBTASK: <a complete question>'. Write nothing else."
)
"""The orchestrator's starting policy (its system prompt; what language-space training edits)."""

PLAN_REQUEST = (
    "{task}\n\nWrite the plan now: one line 'SUBTASK: <question>' per independent sub-task."
)
"""The orchestrator's planning turn; ``{task}`` is the task prompt."""

SUBAGENT_POLICY = (
    "You are a helper. Answer the question briefly. End with one line: ANSWER: <answer>"
)
"""The (frozen) sub-agents' system prompt."""

SUBAGENT_REQUEST = "{context}Question: {question}"
"""A sub-agent's first turn; ``{context}`` is ``"Document: ...\\n"`` or empty."""

SUBAGENT_FOLLOWUP = "State only your final answer now, as: ANSWER: <answer>"
"""A sub-agent's extra turn when its reply had no ``ANSWER:`` line."""

COMBINE_REQUEST = (
    "{task}\n\nYour helpers answered:\n{answers}\n\n"
    "Write the final answer: one line per part, in the order of the parts."
)
"""The orchestrator's combining turn; ``{answers}`` lists ``sub-task -> answer`` lines."""

ENV_DESCRIPTION = (
    "An orchestrator receives a task made of independent parts. It writes a plan of "
    "sub-tasks (lines 'SUBTASK: <question>'); each sub-task is solved by its own helper, all "
    "helpers running at the same time; then the orchestrator combines the helpers' answers "
    "into the final answer. The episode is scored by the share of parts answered correctly, "
    "plus PARL shaping terms for spawning helpers and for helpers that finish."
)
"""What the team does and how it is scored (the critic's context)."""

ORCHESTRATOR_ROLE = (
    "Splits the task into sub-tasks for parallel helpers and combines their answers."
)
"""The orchestrator's role, shown to the critic."""
