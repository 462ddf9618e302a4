"""Replies to moves: words, numbers, the stay fallback and its counting."""

from __future__ import annotations

import pytest

from langmarl.envs.pistonball.actions import FALLBACK, Move, move_name, parse_move


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("up", 1.0),
        ("  Down.", -1.0),
        ("I will STAY here", 0.0),
        ("raise the piston", 1.0),
        ("lower", -1.0),
        ("0.8", 1.0),
        ("-0.9", -1.0),
        ("0.1", 0.0),
        ("5", 1.0),
    ],
)
def test_discrete_replies_become_up_down_or_stay(reply: str, value: float) -> None:
    assert parse_move(reply, "discrete") == Move(value)


@pytest.mark.parametrize(
    ("reply", "value"),
    [("0.35", 0.35), ("-1", -1.0), ("move -0.5 now", -0.5), ("2.5", 1.0), ("up", 1.0)],
)
def test_continuous_replies_keep_the_number_clipped(reply: str, value: float) -> None:
    assert parse_move(reply, "continuous") == Move(value)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I am piston_3",
        "hmm?",
        "You are piston_1, a piston. Help your team roll the ball to the left wall. "
        "Reply up, down or stay.",  # an echo of the prompt is not a decision
        "Reply a number from -1 (down) to 1 (up).",
    ],
)
def test_unreadable_replies_stay_and_are_flagged(reply: str) -> None:
    for mode in ("discrete", "continuous"):
        move = parse_move(reply, mode)  # type: ignore[arg-type]
        assert move.value == FALLBACK == 0.0
        assert move.ok is False


def test_the_first_action_word_wins_over_later_ones_and_numbers() -> None:
    assert parse_move("down, not up; 1", "discrete").value == -1.0
    assert parse_move("Reply up, down or stay. Down.", "discrete").value == -1.0


def test_move_names() -> None:
    assert [move_name(v) for v in (1.0, 0.5, 0.2, 0.0, -0.4, -1.0)] == [
        "up", "up", "stay", "stay", "down", "down",
    ]  # fmt: skip
