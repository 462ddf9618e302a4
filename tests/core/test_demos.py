"""Demonstrations inside a policy text: parsing, rendering and the chat an actor sends."""

import logging

import pytest

from langmarl.core.demos import (
    INPUT_MARK,
    OUTPUT_MARK,
    Demonstration,
    DemoPolicy,
    has_demos,
    policy_messages,
)


def test_a_policy_without_markers_is_all_instruction() -> None:
    parsed = DemoPolicy.parse("  Answer briefly.\n\nBe kind.  ")
    assert parsed == DemoPolicy("Answer briefly.\n\nBe kind.")
    assert not has_demos("Answer briefly.")


def test_render_then_parse_gives_the_same_policy() -> None:
    policy = DemoPolicy(
        "Give one word.",
        (Demonstration("About coffee?", "Coffee"), Demonstration("Two\n\nlines", "A\nB")),
    )
    text = policy.render()
    assert text.count(INPUT_MARK) == 2 and text.count(OUTPUT_MARK) == 2
    assert DemoPolicy.parse(text) == policy
    assert has_demos(text)


def test_an_output_without_its_input_is_dropped() -> None:
    text = f"Rule.\n{OUTPUT_MARK}\norphan\n{INPUT_MARK}\nq\n{OUTPUT_MARK}\na"
    assert DemoPolicy.parse(text).demos == (Demonstration("q", "a"),)


def test_the_actor_sees_demonstrations_as_earlier_turns() -> None:
    text = DemoPolicy("Be brief.", (Demonstration("q1", "a1"), Demonstration("q2", "a2"))).render()
    assert policy_messages(text, "q3") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "q3"},
    ]
    bare = DemoPolicy("", (Demonstration("q1", "a1"),)).render()
    assert policy_messages(bare, "q")[0] == {"role": "user", "content": "q1"}  # no system


def test_a_budget_keeps_the_newest_demonstrations_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    demos = tuple(Demonstration(f"question {i} " * 10, f"answer {i}") for i in range(5))
    text = DemoPolicy("Rule.", demos).render()
    with caplog.at_level(logging.WARNING):
        messages = policy_messages(text, "now", budget=300)
    users = [m["content"] for m in messages if m["role"] == "user"][:-1]
    assert 0 < len(users) < 5 and users[-1].startswith("question 4")
    assert "exceed the budget of 300 characters" in caplog.text
