"""Rewards: qa EM/F1, math-verify, coding in the sandbox, writing judge."""

from langmarl.core.errors import LLMError
from langmarl.envs.language import rewards
from langmarl.envs.language.datasets import shipped_tasks
from langmarl.testing import ScriptedLLM


def test_qa_normalized_exact_match_and_f1() -> None:
    assert rewards.qa_reward("I think.\nAnswer: The Pacific ocean!", "Pacific Ocean")[0] == 1.0
    reward, details = rewards.qa_reward("Answer: Pacific", "Pacific Ocean")
    assert details["exact_match"] == 0.0 and abs(reward - 2 / 3) < 1e-9
    assert rewards.qa_reward("Answer: Mars", "Venus")[0] == 0.0


def test_math_verify_accepts_equivalent_forms() -> None:
    assert rewards.math_reward("Half of 10 is 5.\nAnswer: 5", "5")[0] == 1.0
    assert rewards.math_reward("so \\boxed{\\frac{1}{2}}", "0.5")[0] == 1.0
    assert rewards.math_reward("Answer: 6", "5")[0] == 0.0


async def test_coding_runs_tests_in_the_sandbox() -> None:
    add = next(t for t in shipped_tasks("coding") if t["entry_point"] == "add")
    good = "```python\ndef add(a, b):\n    return a + b\n```"
    assert (await rewards.coding_reward(good, add))[0] == 1.0
    assert (await rewards.coding_reward("    return a + b\n", add))[0] == 1.0  # body only
    reward, details = await rewards.coding_reward("def add(a, b):\n    return a - b", add)
    assert reward == 0.0 and "AssertionError" in details["error"]


async def test_coding_timeout_is_killed() -> None:
    add = next(t for t in shipped_tasks("coding") if t["entry_point"] == "add")
    rewards.CODE_TIMEOUT_S, old = 1.0, rewards.CODE_TIMEOUT_S
    try:
        reward, details = await rewards.coding_reward("while True:\n    pass", add)
    finally:
        rewards.CODE_TIMEOUT_S = old
    assert reward == 0.0 and details["error"] in ("timeout", "cpu_limit")


async def test_writing_judge_score_and_failures() -> None:
    task = shipped_tasks("writing")[0]
    assert (await rewards.writing_reward("text", task, ScriptedLLM(["Score: 7/10"])))[0] == 0.7
    reward, details = await rewards.writing_reward("text", task, ScriptedLLM(["great!"]))
    assert reward == 0.0 and "no score" in details["error"]
    failing = ScriptedLLM([LLMError("scripted", "m", "down")])
    assert (await rewards.writing_reward("text", task, failing))[1]["error"].startswith("judge")


async def test_verified_qa_upgrades_on_yes() -> None:
    task = {"question": "Largest ocean?", "ground_truth": "Pacific Ocean"}
    base = rewards.qa_reward("Answer: the Pacific", "Pacific Ocean")
    reward, details = await rewards.verify_qa("x", task, ScriptedLLM(["Yes."]), base)
    assert reward == 1.0 and details["verified"] is True
