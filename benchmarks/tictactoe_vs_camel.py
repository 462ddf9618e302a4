"""TicTacToe: langmarl's optimal opponent and env vs camel-ai 0.2.90, side by side.

Both libraries get the same O-to-move positions (time per optimal move) and play the same
games, where X follows the same pre-drawn random numbers (full games per second through
``TicTacToeEnv.reset``/``step``). Every optimal move either side makes is checked against
an exact solve. camel-ai runs in its own venv (created on first use):

    python benchmarks/tictactoe_vs_camel.py                  # default sizes
    python benchmarks/tictactoe_vs_camel.py --positions 300 --games 100
    python benchmarks/tictactoe_vs_camel.py --camel-venv /tmp/camel-venv

Each side runs in a fresh interpreter; imports are not timed. Prints a JSON summary last.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from machine_load import print_machine  # beside this script

CAMEL_PINS = ["camel-ai==0.2.90", "mcp<2", "datasets>=3,<4", "numpy<=2.2"]
TORCH_PIN = "torch==2.13.0"
WINS = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


# -- workload (pure, shared by both sides) ------------------------------------------------
def _winner(board: list[str]) -> str | None:
    for a, b, c in WINS:
        if board[a] != " " and board[a] == board[b] == board[c]:
            return board[a]
    return "draw" if " " not in board else None


def make_positions(n: int, seed: int) -> list[list[str]]:
    """``n`` distinct-ish random positions, O to move, game not over."""
    rng = random.Random(seed)
    positions: list[list[str]] = []
    while len(positions) < n:
        board = [" "] * 9
        for ply in range(rng.randrange(1, 8)):
            board[rng.choice([i for i, c in enumerate(board) if c == " "])] = "XO"[ply % 2]
            if _winner(board) is not None:
                break
        x_count, o_count = board.count("X"), board.count("O")
        if _winner(board) is None and x_count == o_count + 1:
            positions.append(board)
    return positions


def make_games(n: int, seed: int) -> list[list[float]]:
    """Per game, five uniform numbers that pick X's moves among the free cells."""
    rng = random.Random(seed)
    return [[rng.random() for _ in range(5)] for _ in range(n)]


# -- worker: runs inside the interpreter of one library -----------------------------------
def _worker(library: str, work: dict[str, Any]) -> dict[str, Any]:
    if library == "camel":
        from camel.environments import Action, Opponent, TicTacToeEnv  # type: ignore[import-not-found]
    else:
        from langmarl.envs import Action, Opponent, TicTacToeEnv  # type: ignore[assignment]

    opponent = Opponent(play_style="optimal")
    positions = work["positions"]
    passes = []
    for _ in range(2):  # pass 1 in a fresh process (cold caches), pass 2 warm
        start = time.perf_counter()
        moves = [opponent.get_optimal_move(list(board)) for board in positions]
        passes.append(time.perf_counter() - start)
    outcomes, game_time, steps = asyncio.run(_play_games(TicTacToeEnv, Action, work["games"]))
    return {
        "library": library,
        "moves": moves,
        "move_total_s": passes[0],
        "move_warm_total_s": passes[1],
        "games_total_s": game_time,
        "game_steps": steps,
        "outcomes": outcomes,
    }


async def _play_games(
    env_cls: Any, action_cls: Any, games: list[list[float]]
) -> tuple[list[str], float, int]:
    env = env_cls()
    await env.setup()
    outcomes, steps = [], 0
    start = time.perf_counter()
    for draws in games:
        observation = await env.reset()
        done, turn, board = False, 0, [" "] * 9
        info: dict[str, Any] = {}
        while not done:
            free = [i for i, c in enumerate(board) if c == " "]
            move = free[int(draws[turn] * len(free))]
            observation, _, done, info = await env.step(
                action_cls(llm_response=f"<Action> {move + 1}")
            )
            board = list(info.get("state", {}).get("board") or _board_from(env))
            turn, steps = turn + 1, steps + 1
        outcomes.append(str(_winner(board)))
    elapsed = time.perf_counter() - start
    await env.close()
    del observation
    return outcomes, elapsed, steps


def _board_from(env: Any) -> list[str]:
    return list(env._state["board"])  # camel keeps the board in its state dict too


# -- driver -------------------------------------------------------------------------------
def ensure_camel(venv: Path) -> Path:
    """The camel venv's python, creating the venv with the pinned packages if needed."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import camel.environments"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, TORCH_PIN], check=True)
    subprocess.run([*pip, *CAMEL_PINS], check=True)
    return python


def run_side(python: str, library: str, work: dict[str, Any]) -> dict[str, Any]:
    completed = subprocess.run(
        [python, __file__, "--worker", library],
        input=json.dumps(work),
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"{library} worker failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def optimal_fraction(positions: list[list[str]], moves: list[int | None]) -> float:
    from langmarl.envs.text import tictactoe_solver as solver

    good = 0
    for board, move in zip(positions, moves, strict=True):
        best = solver.position_score(board, x_to_move=False)
        if move is not None and board[move] == " ":
            after = list(board)
            after[move] = "O"
            chosen = solver.position_score(after, x_to_move=True)
            good += (chosen > 0) - (chosen < 0) == (best > 0) - (best < 0)
    return good / len(positions)


def summarize(ours: dict[str, Any], camel: dict[str, Any], work: dict[str, Any]) -> dict[str, Any]:
    n_pos, n_games = len(work["positions"]), len(work["games"])
    ours_move = ours["move_total_s"] / n_pos
    camel_move = camel["move_total_s"] / n_pos
    ours_warm = ours["move_warm_total_s"] / n_pos
    camel_warm = camel["move_warm_total_s"] / n_pos
    ours_gps = n_games / ours["games_total_s"]
    camel_gps = n_games / camel["games_total_s"]
    return {
        "positions": n_pos,
        "games": n_games,
        "langmarl_move_us": ours_move * 1e6,
        "camel_move_us": camel_move * 1e6,
        "move_speedup": camel_move / ours_move,  # ours includes building the table
        "langmarl_move_warm_us": ours_warm * 1e6,
        "camel_move_warm_us": camel_warm * 1e6,
        "move_warm_speedup": camel_warm / ours_warm,
        "langmarl_games_per_s": ours_gps,
        "camel_games_per_s": camel_gps,
        "games_speedup": ours_gps / camel_gps,
        "langmarl_optimal_fraction": optimal_fraction(work["positions"], ours["moves"]),
        "camel_optimal_fraction": optimal_fraction(work["positions"], camel["moves"]),
        "same_moves_fraction": sum(
            a == b for a, b in zip(ours["moves"], camel["moves"], strict=True)
        )
        / n_pos,
        "langmarl_x_wins": ours["outcomes"].count("X"),
        "camel_x_wins": camel["outcomes"].count("X"),
        "same_outcomes_fraction": sum(
            a == b for a, b in zip(ours["outcomes"], camel["outcomes"], strict=True)
        )
        / n_games,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--games", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--camel-venv", type=Path, default=Path("/tmp/camel-venv"))
    parser.add_argument("--worker", choices=["langmarl", "camel"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.worker, json.loads(sys.stdin.read()))))
        return
    work = {
        "positions": make_positions(args.positions, args.seed),
        "games": make_games(args.games, args.seed + 1),
    }
    camel_python = ensure_camel(args.camel_venv)
    ours = run_side(sys.executable, "langmarl", work)
    camel = run_side(str(camel_python), "camel", work)
    summary = summarize(ours, camel, work)
    for key, value in summary.items():
        print(f"{key:28s} {value:,.3f}" if isinstance(value, float) else f"{key:28s} {value}")
    print(json.dumps(summary))


if __name__ == "__main__":
    print_machine()
    main()
