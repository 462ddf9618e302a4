"""TicTacToeEnv and Opponent: rewards, illegal moves, bad input, seeding, reference methods."""

from __future__ import annotations

import random

import pytest

from langmarl.envs import Action, EnvStateError, Observation, Opponent, TicTacToeEnv


async def _play(env: TicTacToeEnv, *responses: str) -> list[tuple[Observation, float, bool, dict]]:
    await env.reset()
    steps = []
    for response in responses:
        steps.append(await env.step(Action(llm_response=response)))
        if steps[-1][2]:
            break
    return steps


async def test_first_observation_shows_numbered_board_and_format() -> None:
    env = TicTacToeEnv()
    observation = await env.reset()
    assert "<Action>" in observation.question and "1 | 2 | 3" in observation.question
    assert observation.context["available_moves"] == list(range(1, 10))


async def test_loss_against_optimal_opponent_scores_zero() -> None:
    env = TicTacToeEnv()
    steps = await _play(env, "<Action> 2", "<Action> 4", "<Action> 6", "<Action> 7")
    observation, reward, done, info = next(s for s in steps if s[2])
    assert done and reward == 0.0 and info["state"]["winner"] == "O"
    assert "You lost" in observation.question
    await env.close()


async def test_ongoing_reward_is_the_position_value_for_x() -> None:
    env = TicTacToeEnv()
    ((_, reward, done, info),) = await _play(env, "<Action> 5")
    assert not done and reward == 0.5 and info["rewards_dict"] == {"position_value": 0.5}
    assert info["state"]["board"].count("O") == 1


async def test_win_against_random_opponent_scores_one() -> None:
    for seed in range(200):
        env = TicTacToeEnv(play_style="random", seed=seed)
        await env.reset()
        reward, done = 0.0, False
        while not done:
            board = env._state["board"]
            move = _x_strategy(board)
            _, reward, done, _ = await env.step(Action(llm_response=f"<Action> {move + 1}"))
        if env._state["winner"] == "X":
            assert reward == 1.0
            return
    pytest.fail("no win against a random opponent in 200 games")


def _x_strategy(board: list[str]) -> int:
    from langmarl.envs.text import tictactoe_solver as solver

    move = solver.best_move(board, x_to_move=True)
    assert move is not None
    return move


async def test_draw_scores_one_half() -> None:
    env = TicTacToeEnv()
    await env.reset()
    done, reward = False, 0.0
    while not done:
        move = _x_strategy(env._state["board"])
        _, reward, done, info = await env.step(Action(llm_response=f"<Action> {move + 1}"))
    assert info["state"]["winner"] == "draw" and reward == 0.5


@pytest.mark.parametrize(
    "response",
    [
        "",
        "   ",
        "I resign",
        "<Action> 0",
        "<Action> 10",
        "<Action> five",
        "<Action> -3",
        "x" * 5000,
    ],
)
async def test_bad_responses_are_illegal_moves_not_exceptions(response: str) -> None:
    env = TicTacToeEnv()
    ((observation, reward, done, info),) = await _play(env, response)
    assert reward == 0.0 and not done and info["state"]["last_move_illegal"]
    assert info["rewards_dict"] == {"illegal_move": 0.0}
    assert "not a legal move" in observation.question
    assert info["state"]["board"] == [" "] * 9  # nothing changed


async def test_occupied_cell_is_illegal_and_the_game_goes_on() -> None:
    env = TicTacToeEnv()
    steps = await _play(env, "<Action> 5", "<Action> 5", "<Action> 3")
    assert steps[1][1] == 0.0 and "taken" in steps[1][3]["state"]["illegal_reason"]
    assert not steps[2][3]["state"]["last_move_illegal"]


async def test_max_steps_ends_an_episode_of_garbage() -> None:
    env = TicTacToeEnv(max_steps=3)
    steps = await _play(env, "a", "b", "c")
    assert [s[2] for s in steps] == [False, False, True]
    assert env.current_step == 3 and env.is_done()
    with pytest.raises(EnvStateError, match="ended"):
        await env.step(Action(llm_response="<Action> 1"))


async def test_step_before_reset_raises_runtime_error() -> None:
    env = TicTacToeEnv()
    with pytest.raises(RuntimeError, match="set up"):
        await env.step(Action(llm_response="<Action> 1"))
    await env.setup()
    with pytest.raises(RuntimeError, match="reset"):
        await env.step(Action(llm_response="<Action> 1"))


def test_random_opponent_is_seedable_and_leaves_global_random_alone() -> None:
    board = [" "] * 9
    random.seed(123)
    expected_global = random.random()
    random.seed(123)
    a = [Opponent("random", seed=5).select_move(board) for _ in range(5)]
    b = [Opponent("random", seed=5).select_move(board) for _ in range(5)]
    assert a == b
    assert random.random() == expected_global


def test_opponent_minimax_reference_semantics() -> None:
    opponent = Opponent()
    score, move = opponent.minimax(list("XX  O    "), is_maximizing=True)
    assert move == 2 and score == 0.0
    score, move = opponent.minimax(list("XX OO X  "), is_maximizing=True)
    assert move == 5 and score == 1.0
    assert opponent.minimax(list("XXX OO   "), is_maximizing=True) == (-1.0, None)
    assert opponent.get_optimal_move(list("XX  O    ")) == 2
    with pytest.raises(ValueError, match="play_style"):
        Opponent("smart")  # type: ignore[arg-type]


def test_static_helpers() -> None:
    board = list("XO X     ")
    assert TicTacToeEnv.available_moves(board) == [2, 4, 5, 6, 7, 8]
    assert TicTacToeEnv.check_winner(list("XXXOO    ")) == "X"
    assert TicTacToeEnv.evaluate_position_for_x(list("XX OO    "), is_x_turn=True) == 1.0
    assert TicTacToeEnv.evaluate_position_for_x(list("XX OO    "), is_x_turn=False) == 0.0
    assert TicTacToeEnv().render_board(board).splitlines()[0] == "X | O | 3"
    assert len(TicTacToeEnv.WIN_COMBINATIONS) == 8


def test_metadata_is_a_copy() -> None:
    env = TicTacToeEnv(play_style="random", note="x")
    env.metadata["note"] = "changed"
    assert env.metadata == {"note": "x", "play_style": "random"}
