"""Tic-tac-toe rules and an exact solver, as pure functions over 9-cell boards.

A board is a sequence of nine cells, each ``"X"``, ``"O"`` or ``" "``, indexed row by row
from 0. The solver memoizes every reachable position (about 5,500, times whose turn it is),
so after the first query each optimal move is a table lookup instead of a fresh tree search.
Scores prefer quick wins and slow losses: ``10 - filled cells`` for an X win, its negative
for an O win, 0 for a draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Literal

WIN_COMBINATIONS: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2),
    (3, 4, 5),
    (6, 7, 8),
    (0, 3, 6),
    (1, 4, 7),
    (2, 5, 8),
    (0, 4, 8),
    (2, 4, 6),
)
_CELLS = frozenset("XO ")
Winner = Literal["X", "O", "draw"]


def board_key(board: Sequence[str]) -> str:
    """The board as a 9-character string, validated.

    Raises:
        ValueError: if the board does not have 9 cells of ``"X"``, ``"O"`` or ``" "``.
    """
    key = "".join(board)
    if len(board) != 9 or len(key) != 9 or not _CELLS.issuperset(key):
        raise ValueError(f"a tic-tac-toe board is 9 cells of 'X', 'O' or ' ', got {list(board)!r}")
    return key


@cache
def _winner(key: str) -> Winner | None:
    for a, b, c in WIN_COMBINATIONS:
        if key[a] != " " and key[a] == key[b] == key[c]:
            return key[a]  # type: ignore[return-value]
    return "draw" if " " not in key else None


def check_winner(board: Sequence[str]) -> Winner | None:
    """``"X"`` or ``"O"`` if that side has three in a row, ``"draw"`` if full, else ``None``."""
    return _winner(board_key(board))


def available_moves(board: Sequence[str]) -> list[int]:
    """Indices (0-8) of the empty cells."""
    return [i for i, cell in enumerate(board) if cell == " "]


@cache
def _score(key: str, x_to_move: bool) -> int:
    winner = _winner(key)
    filled = 9 - key.count(" ")
    if winner == "X":
        return 10 - filled
    if winner == "O":
        return filled - 10
    if winner == "draw":
        return 0
    mark = "X" if x_to_move else "O"
    scores = [
        _score(key[:i] + mark + key[i + 1 :], not x_to_move) for i in range(9) if key[i] == " "
    ]
    return max(scores) if x_to_move else min(scores)


@cache
def _best_move(key: str, x_to_move: bool) -> int | None:
    if _winner(key) is not None:
        return None
    mark = "X" if x_to_move else "O"
    sign = 1 if x_to_move else -1
    moves = [i for i in range(9) if key[i] == " "]
    return max(
        moves, key=lambda i: (sign * _score(key[:i] + mark + key[i + 1 :], not x_to_move), -i)
    )


def position_score(board: Sequence[str], x_to_move: bool) -> int:
    """Exact minimax score for X (positive: X wins, negative: O wins, 0: draw)."""
    return _score(board_key(board), x_to_move)


def best_move(board: Sequence[str], x_to_move: bool) -> int | None:
    """An optimal move (lowest index among equals) for the side to move; ``None`` if over."""
    return _best_move(board_key(board), x_to_move)


def value_for_x(board: Sequence[str], x_to_move: bool) -> float:
    """The outcome for X under perfect play: 1.0 win, 0.5 draw, 0.0 loss."""
    score = position_score(board, x_to_move)
    return 1.0 if score > 0 else 0.0 if score < 0 else 0.5
