"""Tic-tac-toe: the LLM plays X against an :class:`Opponent` playing O.

Moves are read from ``<Action> n`` (n = 1-9). Rewards: 1 for a win, 0.5 for a draw, 0 for a
loss or an illegal move; while the game goes on, the value of the position for X under
perfect play. An illegal move (garbage, an occupied or out-of-range cell) scores 0 and the
game continues with a note in the next observation; ``max_steps`` caps how often that can
happen.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from langmarl.envs.text import prompts
from langmarl.envs.text import tictactoe_solver as solver
from langmarl.envs.text.models import Action, Observation
from langmarl.envs.text.multi_step import MultiStepEnv
from langmarl.extractors.base import BaseExtractor
from langmarl.extractors.strategies import ActionTagStrategy

PlayStyle = Literal["optimal", "random"]


class Opponent:
    """The O player: exact optimal play (memoized minimax) or uniformly random moves.

    Args:
        play_style: ``"optimal"`` (never loses; takes a win, blocks a loss) or ``"random"``.
        seed: Seed of the random style's own RNG (the global ``random`` state is untouched).
    """

    def __init__(self, play_style: PlayStyle = "optimal", seed: int | None = None) -> None:
        if play_style not in ("optimal", "random"):
            raise ValueError(f"play_style must be 'optimal' or 'random', got {play_style!r}")
        self.play_style = play_style
        self._rng = random.Random(seed)

    def select_move(self, board: list[str]) -> int | None:
        """A move (0-8) in this opponent's style, or ``None`` if the board is full or decided."""
        if self.play_style == "random":
            moves = solver.available_moves(board) if solver.check_winner(board) is None else []
            return self._rng.choice(moves) if moves else None
        return self.get_optimal_move(board)

    def get_optimal_move(self, board: list[str]) -> int | None:
        """The optimal move for O (0-8), or ``None`` if the game is over."""
        return solver.best_move(board, x_to_move=False)

    def minimax(
        self,
        board: list[str],
        is_maximizing: bool,
        depth: int = 0,
        alpha: float = -float("inf"),
        beta: float = float("inf"),
    ) -> tuple[float, int | None]:
        """``(score, move)`` for the side to move: O if ``is_maximizing``, else X.

        Score is 1 if O wins under perfect play, -1 if X wins, 0 for a draw; ``move`` is the
        best move or ``None`` on a finished board. The values are exact (memoized over all
        positions), so ``depth``, ``alpha`` and ``beta`` are accepted for compatibility and
        do not change the answer.
        """
        del depth, alpha, beta
        x_to_move = not is_maximizing
        score = solver.position_score(board, x_to_move)
        sign = (score < 0) - (score > 0)  # O's perspective
        return float(sign), solver.best_move(board, x_to_move)


class TicTacToeEnv(MultiStepEnv):
    """Tic-tac-toe for an LLM playing X.

    Args:
        extractor: Reads the move; default: the ``<Action> n`` tag.
        max_steps: Cap on steps (illegal moves included); ``None``: until the game ends.
        play_style: The opponent's style, ``"optimal"`` or ``"random"``.
        seed: Seed of a random opponent.
        **kwargs: Kept as metadata.
    """

    WIN_COMBINATIONS: ClassVar[list[tuple[int, int, int]]] = list(solver.WIN_COMBINATIONS)

    def __init__(
        self,
        extractor: BaseExtractor | None = None,
        max_steps: int | None = None,
        play_style: PlayStyle = "optimal",
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(extractor or BaseExtractor([[ActionTagStrategy()]]), max_steps, **kwargs)
        self.opponent = Opponent(play_style, seed=seed)
        self._metadata.setdefault("play_style", play_style)

    def _get_initial_state(self) -> dict[str, Any]:
        return {
            "board": [" "] * 9,
            "game_over": False,
            "winner": None,
            "last_move_illegal": False,
            "illegal_reason": None,
            "last_move": None,
            "opponent_move": None,
        }

    async def _update_state(self, action: Action) -> None:
        state = self._state
        move, reason = await self._parse_move(action.llm_response, state["board"])
        state["last_move_illegal"], state["illegal_reason"] = move is None, reason
        if move is None:
            return
        board: list[str] = state["board"]
        board[move] = "X"
        state["last_move"], state["opponent_move"] = move + 1, None
        winner = solver.check_winner(board)
        if winner is None:
            reply = self.opponent.select_move(board)
            if reply is not None:
                board[reply] = "O"
                state["opponent_move"] = reply + 1
            winner = solver.check_winner(board)
        state["winner"], state["game_over"] = winner, winner is not None

    async def _parse_move(self, response: Any, board: list[str]) -> tuple[int | None, str | None]:
        """``(index 0-8, None)`` for a legal move, else ``(None, why not)``."""
        text = response if isinstance(response, str) else ""
        extracted = await self.extractor.extract(text)
        if extracted is None:
            return None, "no '<Action> n' found"
        try:
            number = int(extracted.strip().split()[0].rstrip(".,;:"))
        except (ValueError, IndexError):
            return None, f"{extracted[:20]!r} is not a cell number"
        if not 1 <= number <= 9:
            return None, f"{number} is not between 1 and 9"
        if board[number - 1] != " ":
            return None, f"cell {number} is taken"
        return number - 1, None

    def _get_next_observation(self) -> Observation:
        board = self._state["board"]
        reason = self._state.get("illegal_reason")
        note = prompts.TICTACTOE_ILLEGAL_NOTE.format(reason=reason) if reason else ""
        moves = [i + 1 for i in solver.available_moves(board)]
        question = prompts.TICTACTOE_INSTRUCTIONS.format(
            board=self.render_board(board), note=note, moves=", ".join(map(str, moves))
        )
        return Observation(
            question=question, context={"board": list(board), "available_moves": moves}
        )

    def _get_terminal_observation(self) -> Observation:
        board = self._state["board"]
        outcome = prompts.TICTACTOE_OUTCOMES[self._state.get("winner")]
        question = prompts.TICTACTOE_FINAL.format(outcome=outcome, board=self.render_board(board))
        return Observation(
            question=question, context={"board": list(board), "winner": self._state.get("winner")}
        )

    def _is_done(self) -> bool:
        return bool(self._state.get("game_over"))

    async def compute_reward(self) -> tuple[float, dict[str, float]]:
        """1 win, 0.5 draw, 0 loss or illegal move; else the position's value for X."""
        state = self._state
        if state["last_move_illegal"]:
            return 0.0, {"illegal_move": 0.0}
        winner = state["winner"]
        if winner is not None:
            value = {"X": 1.0, "O": 0.0, "draw": 0.5}[winner]
            return value, {"outcome": value}
        value = self.evaluate_position_for_x(state["board"], is_x_turn=True)
        return value, {"position_value": value}

    @staticmethod
    def available_moves(board: list[str]) -> list[int]:
        """Indices (0-8) of the empty cells."""
        return solver.available_moves(board)

    @staticmethod
    def check_winner(board: list[str]) -> Literal["X", "O", "draw"] | None:
        """``"X"``/``"O"`` for three in a row, ``"draw"`` when full, ``None`` while ongoing."""
        return solver.check_winner(board)

    @staticmethod
    def evaluate_position_for_x(
        board: list[str], is_x_turn: bool, depth: int = 0, max_depth: int = 10
    ) -> float:
        """The outcome for X under perfect play: 1.0 win, 0.5 draw, 0.0 loss.

        Exact for every position (memoized), so ``depth`` and ``max_depth`` do not matter.
        """
        del depth, max_depth
        return solver.value_for_x(board, is_x_turn)

    def render_board(self, board: Sequence[str]) -> str:
        """The board as three rows; empty cells show their number (1-9)."""
        cells = [cell if cell != " " else str(i + 1) for i, cell in enumerate(board)]
        rows = [" | ".join(cells[r : r + 3]) for r in (0, 3, 6)]
        return "\n---------\n".join(rows)
