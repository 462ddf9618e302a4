"""Prompt templates of the weight-space tasks and external feedback modes (data, not code)."""

# -- external feedback -----------------------------------------------------------------------

PLAIN_REVISION = """{prompt}

Your previous attempts:
{history}

Revise your previous answer and give an improved one."""

HISTORY_ITEM = "[turn {turn}] {response}"

LEVEL_FEEDBACK = """{prompt}

Your previous answer:
{response}

Diagnosis of the team's combined code:
{diagnosis}

Fix the problems and answer again."""

EXPERT_SYSTEM = (
    "You are an expert Python reviewer. Point out concrete, minimal edits that make the code "
    "correct. Answer with a short list of edits, no full rewrite."
)

EXPERT_REQUEST = """Task:
{prompt}

Code written by the team:
{code}

List the edits needed."""

EXPERT_EDITS = """{prompt}

Your previous answer:
{response}

An expert suggests these edits:
{edits}

Apply the edits and answer again."""

# -- cooperative coding ----------------------------------------------------------------------

CODING_HELPER = """You write a helper function for a teammate.
Task of the team: {prompt}
Write one Python function named `aux` that would help solve the task. Output only code."""

CODING_MAIN = """Complete this Python function. You may call a helper `aux` written by a teammate.
{prompt}
Output only the code of `{entry_point}`."""

# -- cooperative writing ---------------------------------------------------------------------

WRITING_SUMMARY = "Write a one-sentence summary about: {prompt}"

WRITING_EXPANSION = "Write a detailed paragraph of several sentences about: {prompt}"
