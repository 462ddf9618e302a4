"""Plan parsing: the SUBTASK format, numbered plans, and the documented fallbacks."""

from __future__ import annotations

from langmarl.envs.parallel.plan import parse_plan, task_parts

TASK = "Answer every part of this task.\n1. What is 2 + 2?\n2. What is 3 * 3?"


def test_subtask_lines_in_several_spellings() -> None:
    plan = parse_plan(
        "Here is my plan:\nSUBTASK: What is 2 + 2?\n- Sub-task 2) What is 3 * 3?\n"
        "subtask 3: What is 1 + 1?\nDone.",
        TASK,
    )
    assert plan.status == "plan"
    assert plan.subtasks == ["What is 2 + 2?", "What is 3 * 3?", "What is 1 + 1?"]


def test_numbered_plan_is_second_choice() -> None:
    plan = parse_plan("1. What is 2 + 2?\n2) What is 3 * 3?", TASK)
    assert plan.status == "plan_numbered" and len(plan.subtasks) == 2


def test_unparseable_plan_falls_back_to_the_task_parts() -> None:
    plan = parse_plan("I will solve this step by step. The answer is 4.", TASK)
    assert plan.status == "fallback_parts"
    assert plan.subtasks == ["What is 2 + 2?", "What is 3 * 3?"]


def test_task_without_parts_falls_back_to_one_subagent() -> None:
    plan = parse_plan("", "What is the capital of France?")
    assert plan.status == "fallback_single"
    assert plan.subtasks == ["What is the capital of France?"]


def test_empty_subtask_lines_are_ignored() -> None:
    assert parse_plan("SUBTASK:   \nSUBTASK: x?", TASK).subtasks == ["x?"]
    assert task_parts("(a) first\n(b) second\nnot a part") == ["first", "second"]


def test_single_fallback_skips_the_task_parts() -> None:
    plan = parse_plan("I will solve this step by step. The answer is 4.", TASK, fallback="single")
    assert plan.status == "fallback_single" and plan.subtasks == [TASK]
    numbered = parse_plan("1. What is 2 + 2?\n2) What is 3 * 3?", TASK, fallback="single")
    assert numbered.status == "plan_numbered" and len(numbered.subtasks) == 2
