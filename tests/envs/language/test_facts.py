"""Verifier facts of the language tasks: expected vs got, format violations, failing tests."""

import pytest

from langmarl.config import LanguageTaskConfig
from langmarl.envs.language.env import LanguageEnv
from langmarl.envs.language.facts import MAX_FACT_CHARS, verifier_facts
from langmarl.envs.language.rewards import coding_reward, math_reward, qa_reward
from langmarl.testing import ScriptedLLM


def test_qa_expected_vs_got_and_a_missing_answer_line() -> None:
    task = {"ground_truth": "Paris"}
    output = "It is Paris."
    facts = verifier_facts("qa", task, output, qa_reward(output, "Paris")[1])
    assert facts[0] == "Expected answer: 'Paris'; the team's final answer: 'It is Paris.'."
    assert facts[1] == "Exact match: no; token F1: 0.50."
    assert facts[2].startswith("Format violation: the final reply has no 'Answer: ...' line")
    facts = verifier_facts("qa", task, "Answer: Paris", qa_reward("Answer: Paris", "Paris")[1])
    assert facts == [
        "Expected answer: 'Paris'; the team's final answer: 'Paris'.",
        "Exact match: yes; token F1: 1.00.",
    ]


def test_math_verdict() -> None:
    output = "So the result is\nAnswer: 41"
    facts = verifier_facts("math", {"ground_truth": "42"}, output, math_reward(output, "42")[1])
    assert facts == [
        "Expected answer: '42'; the team's final answer: '41': wrong (checked by math-verify)."
    ]


async def test_coding_failing_tests_missing_block_and_function() -> None:
    task = {
        "question": "def add(a, b):\n",
        "entry_point": "add",
        "test": "assert add(1, 2) == 3, 'add(1, 2) should be 3'",
    }
    output = "    return a - b"
    facts = verifier_facts("coding", task, output, (await coding_reward(output, task))[1])
    assert facts[0] == "Format violation: the final reply has no ```python code block."
    assert facts[1].startswith("The final code does not define add()")
    assert facts[2].startswith("The hidden tests failed:") and "should be 3" in facts[2]
    good = "```python\ndef add(a, b):\n    return a + b\n```"
    facts = verifier_facts("coding", task, good, (await coding_reward(good, task))[1])
    assert facts == ["The hidden tests passed."]


def test_writing_has_no_verifier_and_long_values_are_cut() -> None:
    assert verifier_facts("writing", {}, "a poem", {"judge": "7"}) == []
    facts = verifier_facts("qa", {"ground_truth": "x" * 1000}, "Answer: y", {"prediction": "y"})
    assert len(facts[0]) < MAX_FACT_CHARS + 80


@pytest.mark.parametrize(("task_type", "verified"), [("qa", True), ("writing", False)])
def test_the_env_says_whether_it_has_a_verifier(task_type: str, verified: bool) -> None:
    assert LanguageEnv(LanguageTaskConfig(task_type=task_type)).has_verifier is verified


async def test_episodes_carry_the_facts() -> None:
    env = LanguageEnv(
        LanguageTaskConfig(task_type="qa"), llm=ScriptedLLM(["notes", "Answer: Rome"])
    )
    task = {"id": "t", "task_type": "qa", "question": "Capital of France?", "ground_truth": "Paris"}
    trajectory = await env.acollect_trajectory(env.default_policies(), task)
    assert trajectory.metadata["verifier_facts"][0] == (
        "Expected answer: 'Paris'; the team's final answer: 'Rome'."
    )
