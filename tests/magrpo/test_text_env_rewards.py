"""Weight-space bridges: MAGRPO-shaped rewards and transitions from text environments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langmarl.magrpo.text_envs import (
    tictactoe_reward,
    tictactoe_transition,
    verifier_feedback,
    verifier_reward,
)
from langmarl.verifiers import ExactMatchVerifier, MathVerifier


@dataclass(frozen=True)
class Sample:
    """The fields of ``langmarl.magrpo.rollout.JointSample`` the bridges read."""

    example: dict[str, Any]
    turn: int
    completions: tuple[str, ...]
    prompts: tuple[str, ...] = ()
    response_history: tuple[tuple[str, ...], ...] = ((), ())


def test_verifier_reward_scores_the_last_agents_answer() -> None:
    reward = verifier_reward(MathVerifier(timeout=10))
    samples = [
        Sample({"final_answer": "4"}, 0, ("thinking", r"\boxed{4}")),
        Sample({"final_answer": "4"}, 0, ("4", "five")),
        Sample({"final_answer": "4"}, 0, ("4", "")),
    ]
    assert reward(samples) == [1.0, 0.0, 0.0]


def test_verifier_feedback_says_whether_the_answer_checked_out() -> None:
    transition = verifier_feedback(ExactMatchVerifier(), {"Capital of France?": "Paris"})
    right = transition("Capital of France?", ["x", "paris"], 2)
    wrong = transition("Capital of France?", ["x", "Lyon"], 2)
    assert len(right) == 2 and "found it correct" in right[0]
    assert "not correct" in wrong[1] and "Lyon" in wrong[1]


def test_tictactoe_reward_replays_the_branch() -> None:
    reward = tictactoe_reward()
    center = Sample({}, 0, ("<Action> 5",), response_history=((),))
    garbage = Sample({}, 1, ("hmm",), response_history=(("<Action> 5",),))
    losing = Sample({}, 1, ("<Action> 3",), response_history=(("<Action> 2",),))
    values = reward([center, garbage, losing])
    assert values[0] == 0.5 and values[1] == 0.0
    assert values[2] in (0.0, 0.5)  # the position's value for X after the opponent's reply


def test_tictactoe_transition_shows_the_board_after_the_branchs_moves() -> None:
    transition = tictactoe_transition()
    (prompt,) = transition("play", ["<Action> 5"], 1, [["play"]], [["<Action> 5"]])
    assert "X" in prompt and "<Action>" in prompt and "5 |" not in prompt
    (repeat,) = transition("play", ["<Action> 5"], 1, None, [["<Action> 5", "<Action> 5"]])
    assert "taken" in repeat  # the same move twice is illegal, not deduplicated
