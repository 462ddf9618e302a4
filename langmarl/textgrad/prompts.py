"""Prompts of the language-space critic and optimizer, as data.

Templates use ``string.Template`` placeholders (``$name``), so JSON braces in them need no
escaping. The critic's templates can be replaced by files in a ``prompts_dir`` (see
:data:`CRITIC_TEMPLATE_FILES`).
"""

from __future__ import annotations

FEEDBACK_HEADER = "[CASE-SPECIFIC FEEDBACK]"
"""Heading of the section ``apply_gradient`` appends to a policy (replaced on every call)."""

GRADIENT_SEPARATOR = "--- gradient {index} ---"
"""Marker put before each gradient by the static ``aggregate_gradients``."""

CRITIC_SYSTEM = (
    "You are a strict, fair critic of a team of AI agents. You judge what each agent "
    "actually did, point to concrete mistakes, and say what would have worked better."
)

CRITIC_GLOBAL = """\
$context

Team members, in the order they act:
$roles

Episode:
$trajectory
$facts
Evaluate the team as a whole. Was the final answer right (reward $reward)? What went well,
what went wrong, and what one change would most improve the team? Answer in at most
6 sentences."""

CRITIC_CREDIT = """\
$context

Team members, in the order they act:
$roles

Episode:
$trajectory
$facts
Assign credit to each agent for the outcome (reward $reward): what did its contribution
add or break, and what should it do differently next time? Reply with one JSON object
mapping each agent id to one or two sentences of feedback, for example:
$json_example
Use exactly these agent ids: $agent_ids."""

CRITIC_FACTS = """\

Facts established by the task's verifier (a program, not an opinion; trust them over your
own reading of the episode):
$facts
Base your judgement on these facts, but do not quote the expected answer in your feedback:
give advice that also helps on other tasks.
"""
"""The grounded-feedback section filled into a critic template's ``$facts`` (appended when
a custom template has no ``$facts``); see :mod:`langmarl.textgrad.grounding`."""

CRITIC_TEMPLATE_FILES = {
    "system": "critic_system.txt",
    "central_global": "central_global.txt",
    "central_credit": "central_credit.txt",
}
"""Template name → file name looked up in a critic's ``prompts_dir``."""

GRADIENT_SYSTEM = (
    "You improve the instructions (system prompts) of AI agents. Given an agent's current "
    "instructions and feedback on its behaviour, you write a concrete improvement "
    "instruction. Reply with 2-4 sentences of specific advice, nothing else."
)

GRADIENT_USER = """\
Agent: $agent_name

Current instructions:
$policy

Task context:
$context

Feedback on the agent's behaviour:
$evaluation

Write 2-4 sentences telling this agent exactly how to change its behaviour."""

SHARED_GRADIENT_USER = """\
Task context:
$context

Feedback on the whole team:
$evaluation

Write 2-4 sentences of advice every agent of the team should follow next time."""

AGGREGATE_SYSTEM = (
    "You merge improvement advice collected from several episodes into one short list of "
    "rules. Keep advice that repeats or generalizes across episodes; drop one-off details "
    "that only fit a single task."
)

AGGREGATE_USER = """\
Advice for $agent_name from $count episodes:
$gradients

Write at most 5 short, general rules that combine the advice above. Reply with the rules only."""

REWRITE_SYSTEM = (
    "You rewrite the instructions (system prompt) of an AI agent so that it follows "
    "improvement advice. The result must be a complete, self-contained system prompt."
)

REWRITE_USER = """\
Agent: $agent_name

Current instructions:
$policy

Advice to build in:
$gradient

Write the improved instructions for this agent. Keep its role and whatever still works,
build the advice in, and reply with the new instructions only."""
