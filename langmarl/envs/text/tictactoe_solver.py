"""Tic-tac-toe rules and an exact solver, as pure functions over 9-cell boards.

A board is a sequence of nine cells, each ``"X"``, ``"O"`` or ``" "``, indexed row by row
from 0; internally two 9-bit masks. The solver memoizes every reachable position (about
5,500), so after the first query each optimal move is a table lookup instead of a fresh
tree search.
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


_LINE_MASKS = tuple(sum(1 << i for i in line) for line in WIN_COMBINATIONS)
_HAS_LINE = frozenset(b for b in range(512) if any(b & m == m for m in _LINE_MASKS))
_FULL = 0x1FF


def _bits(key: str) -> tuple[int, int]:
    """The X and O cells of a board key as 9-bit masks (bit i = cell i)."""
    x = o = 0
    for i, cell in enumerate(key):
        if cell == "X":
            x |= 1 << i
        elif cell == "O":
            o |= 1 << i
    return x, o


def _winner_bits(x: int, o: int) -> Winner | None:
    if x in _HAS_LINE:
        return "X"
    if o in _HAS_LINE:
        return "O"
    return "draw" if x | o == _FULL else None


def check_winner(board: Sequence[str]) -> Winner | None:
    """``"X"`` or ``"O"`` if that side has three in a row, ``"draw"`` if full, else ``None``."""
    return _winner_bits(*_bits(board_key(board)))


def available_moves(board: Sequence[str]) -> list[int]:
    """Indices (0-8) of the empty cells."""
    return [i for i, cell in enumerate(board) if cell == " "]


@cache
def _score(x: int, o: int, x_to_move: bool) -> int:
    filled = (x | o).bit_count()
    if x in _HAS_LINE:
        return 10 - filled
    if o in _HAS_LINE:
        return filled - 10
    if filled == 9:
        return 0
    quickest = 9 - filled  # the best any move can score: winning right now
    best = -10 if x_to_move else 10
    for i in range(9):
        bit = 1 << i
        if (x | o) & bit:
            continue
        if x_to_move:
            best = max(best, _score(x | bit, o, False))
            if best == quickest:
                break
        else:
            best = min(best, _score(x, o | bit, True))
            if best == -quickest:
                break
    return best


@cache
def _best_move(x: int, o: int, x_to_move: bool) -> int | None:
    if _winner_bits(x, o) is not None:
        return None
    moves = [i for i in range(9) if not (x | o) & (1 << i)]
    if x_to_move:
        return max(moves, key=lambda i: (_score(x | 1 << i, o, False), -i))
    return max(moves, key=lambda i: (-_score(x, o | 1 << i, True), -i))


def position_score(board: Sequence[str], x_to_move: bool) -> int:
    """Exact minimax score for X (positive: X wins, negative: O wins, 0: draw)."""
    return _score(*_bits(board_key(board)), x_to_move)


def best_move(board: Sequence[str], x_to_move: bool) -> int | None:
    """An optimal move (lowest index among equals) for the side to move; ``None`` if over."""
    return _best_move(*_bits(board_key(board)), x_to_move)


def value_for_x(board: Sequence[str], x_to_move: bool) -> float:
    """The outcome for X under perfect play: 1.0 win, 0.5 draw, 0.0 loss."""
    score = position_score(board, x_to_move)
    return 1.0 if score > 0 else 0.0 if score < 0 else 0.5
