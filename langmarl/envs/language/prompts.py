"""Prompts of the language environment: team roles, starting policies, observations, judges.

Templates use ``string.Template`` placeholders (``$name``).
"""

from __future__ import annotations

# Agent ids per task type, in turn order: the first N-1 contributors, then the answerer.
# With more agents than listed contributors, ``contributor_K`` ids are added.
CONTRIBUTORS: dict[str, list[str]] = {
    "qa": ["researcher", "reasoner", "checker"],
    "math": ["analyst", "solver", "checker"],
    "coding": ["planner", "coder", "reviewer"],
    "writing": ["outliner", "drafter", "editor"],
}
ANSWERER: dict[str, str] = {
    "qa": "answerer",
    "math": "finalizer",
    "coding": "implementer",
    "writing": "writer",
}

ROLES: dict[str, str] = {
    "researcher": "find the facts in the context that the question needs",
    "reasoner": "connect the facts step by step",
    "checker": "check the work so far and point out mistakes",
    "answerer": "give the final short answer",
    "analyst": "restate the problem and plan the solution",
    "solver": "work the solution out step by step",
    "finalizer": "check the solution and state the final answer",
    "planner": "plan the function: inputs, outputs, edge cases",
    "coder": "write a first implementation",
    "reviewer": "review the code and point out bugs",
    "implementer": "write the final, complete Python function",
    "outliner": "outline the passage",
    "drafter": "write a first draft",
    "editor": "suggest concrete improvements to the draft",
    "writer": "write the final passage",
}
"""Each agent's job, as a verb phrase that completes "you ..." (the starting policies say
"You are the researcher of a team: you find the facts ...")."""
DEFAULT_ROLE = "contribute to the solution"
"""The job of agents not listed in :data:`ROLES` (``contributor_K``)."""

FINAL_FORMAT: dict[str, str] = {
    "qa": "End your reply with a line 'Answer: <short answer>'.",
    "math": "End your reply with a line 'Answer: <final number or expression>'.",
    "coding": "Reply with the complete Python function in one ```python code block.",
    "writing": "Reply with the final passage only.",
}

DESCRIPTIONS: dict[str, str] = {
    "qa": "A team of agents answers a question from the given context, one agent after "
    "another. The reward is the exact-match/F1 score of the last agent's answer.",
    "math": "A team of agents solves a math problem, one agent after another. The reward is "
    "1 if the last agent's final answer is mathematically equal to the reference, else 0.",
    "coding": "A team of agents writes a Python function, one agent after another. The "
    "reward is 1 if the last agent's code passes the hidden tests, else 0.",
    "writing": "A team of agents writes a short creative passage, one agent after another. "
    "The reward is a judge's 1-10 score of the last agent's passage, divided by 10.",
}

POLICY = "You are the {agent_id} of a team: you {role}. Be brief and concrete."
FINAL_POLICY = "You are the {agent_id} of a team: you {role}. {final_format}"

OBSERVATION = """\
Task:
$question
$context
$history
$instruction"""

HISTORY = "Your teammates' work so far:\n$entries"

CONTRIBUTOR_INSTRUCTION = "Do your part in a few sentences: $role."
ANSWERER_INSTRUCTION = "$final_format"

JUDGE_SYSTEM = "You are a strict judge. Reply with exactly what is asked, nothing else."

WRITING_JUDGE = """\
Task: $task
Criteria: $criteria

Passage:
$text

Score the passage from 1 (poor) to 10 (excellent) on the criteria. Reply with the number only."""

QA_VERIFY = """\
Question: $question
Reference answer: $gold
Given answer: $answer

Does the given answer mean the same as the reference answer? Reply yes or no."""
