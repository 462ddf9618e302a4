"""The exact solver: rules, values checked against a plain minimax, optimal play."""

from __future__ import annotations

import random

import pytest

from langmarl.envs.text import tictactoe_solver as solver


def _plain_minimax(board: list[str], x_to_move: bool) -> int:
    """Reference: unmemoized minimax returning only the sign (+1 X wins, -1 O wins, 0 draw)."""
    winner = solver.check_winner(board)
    if winner is not None:
        return {"X": 1, "O": -1, "draw": 0}[winner]
    values = []
    for i in solver.available_moves(board):
        board[i] = "X" if x_to_move else "O"
        values.append(_plain_minimax(board, not x_to_move))
        board[i] = " "
    return max(values) if x_to_move else min(values)


def _random_position(rng: random.Random) -> tuple[list[str], bool]:
    board = [" "] * 9
    x_to_move = True
    for _ in range(rng.randrange(3, 8)):
        if solver.check_winner(board) is not None:
            break
        board[rng.choice(solver.available_moves(board))] = "X" if x_to_move else "O"
        x_to_move = not x_to_move
    return board, x_to_move


def test_check_winner_rows_columns_diagonals_and_draw() -> None:
    assert solver.check_winner(list("XXX      ")) == "X"
    assert solver.check_winner(list("O  O  O  ")) == "O"
    assert solver.check_winner(list("  X X X  ")) == "X"
    assert solver.check_winner(list("XOXXOOOXX")) == "draw"
    assert solver.check_winner([" "] * 9) is None


def test_bad_boards_are_rejected_with_the_value() -> None:
    with pytest.raises(ValueError, match="9 cells"):
        solver.check_winner(["X"] * 8)
    with pytest.raises(ValueError, match="9 cells"):
        solver.best_move(list("XQ       "), x_to_move=False)


def test_values_match_a_plain_minimax_on_random_positions() -> None:
    rng = random.Random(7)
    for _ in range(60):
        board, x_to_move = _random_position(rng)
        score = solver.position_score(board, x_to_move)
        expected = _plain_minimax(list(board), x_to_move)
        assert (score > 0) - (score < 0) == expected, (board, x_to_move)


def test_empty_board_is_a_draw() -> None:
    assert solver.value_for_x([" "] * 9, x_to_move=True) == 0.5


def test_o_takes_a_win_over_a_block() -> None:
    # O can win at 5 (3-4-5 row); X threatens 2 (0-1-2 row).
    board = list("XX OO X  ")
    assert solver.best_move(board, x_to_move=False) == 5


def test_o_blocks_a_loss() -> None:
    board = list("XX  O    ")
    assert solver.best_move(board, x_to_move=False) == 2


def _all_games_against_optimal_o(board: list[str]) -> list[str]:
    """Outcome of every X move sequence against the optimal O."""
    winner = solver.check_winner(board)
    if winner is not None:
        return [winner]
    outcomes = []
    for i in solver.available_moves(board):
        after = list(board)
        after[i] = "X"
        if solver.check_winner(after) is None:
            reply = solver.best_move(after, x_to_move=False)
            assert reply is not None
            after[reply] = "O"
        outcomes += _all_games_against_optimal_o(after)
    return outcomes


def test_optimal_o_never_loses_to_any_x_strategy() -> None:
    outcomes = _all_games_against_optimal_o([" "] * 9)
    assert "X" not in outcomes and "O" in outcomes and "draw" in outcomes


def test_finished_board_has_no_move() -> None:
    assert solver.best_move(list("XXXOO    "), x_to_move=False) is None
