"""Full PettingZoo episodes with scripted pistons, in both action modes."""

from __future__ import annotations

import pytest

from langmarl.config.envs import PistonballConfig
from langmarl.core.errors import EnvError
from langmarl.envs.pistonball.env import PistonballEnv
from langmarl.envs.pistonball.episode import (
    EpisodeSettings,
    play_episode,
    scripted_decider,
)
from langmarl.envs.pistonball.physics import PhysicsState
from langmarl.envs.pistonball.record import ramp_reply


def _settings(mode: str, pistons: int = 8, cycles: int = 60) -> EpisodeSettings:
    return EpisodeSettings(
        num_pistons=pistons, max_cycles=cycles, action_mode=mode,  # type: ignore[arg-type]
        random_drop=False, random_rotate=False,
    )  # fmt: skip


def _numbers(index: int, state: PhysicsState) -> str:
    """The ramp written as numbers, for continuous mode."""
    return "1.0" if ramp_reply(index, state) == "up" else "-1"


@pytest.mark.parametrize(("mode", "reply"), [("discrete", ramp_reply), ("continuous", _numbers)])
async def test_the_ramp_rolls_the_ball_to_the_wall(mode: str, reply) -> None:  # type: ignore[no-untyped-def]
    result = await play_episode(_settings(mode), scripted_decider(reply), seed=0)
    assert result.terminated
    assert len(result.cycles) < 60
    assert result.cycles[-1].ball_x < result.start.ball.x - 4
    assert result.reward > 90  # +100 for the whole distance, -0.1 per cycle before
    assert result.parse_failures == 0


@pytest.mark.parametrize("mode", ["discrete", "continuous"])
async def test_all_down_lets_a_spinning_ball_roll_right(mode: str) -> None:
    reply = "down" if mode == "discrete" else "-1"
    settings = EpisodeSettings(num_pistons=8, max_cycles=30, action_mode=mode)  # type: ignore[arg-type]
    result = await play_episode(settings, scripted_decider(lambda i, s: reply), seed=5)
    assert not result.terminated
    assert len(result.cycles) == 30  # truncated at max_cycles
    assert result.cycles[-1].ball_x > result.start.ball.x + 1
    assert result.reward < -10
    assert all(h == 0 for h in result.cycles[-1].heights)  # every piston fully down


@pytest.mark.parametrize(("reply", "seed"), [(ramp_reply, 0), (lambda i, s: "down", 5)])
async def test_each_cycles_reward_follows_the_balls_move(reply, seed: int) -> None:  # type: ignore[no-untyped-def]
    settings = EpisodeSettings(num_pistons=8, max_cycles=30)
    result = await play_episode(settings, scripted_decider(reply), seed=seed)
    before = result.start.ball.x
    for cycle in result.cycles:
        moved = cycle.ball_x - before
        if moved < -0.05:
            assert cycle.reward > 0, cycle
        elif moved > 0.05:
            assert cycle.reward < -0.1, cycle
        before = cycle.ball_x


async def test_all_up_raises_every_piston_to_the_top() -> None:
    result = await play_episode(
        _settings("discrete", cycles=20), scripted_decider(lambda i, s: "up"), seed=1
    )
    assert result.cycles[-1].heights == [16] * 8


async def test_unreadable_replies_stay_and_are_counted() -> None:
    def reply(index: int, state: PhysicsState) -> str:
        return "no idea" if index % 2 else "up"

    result = await play_episode(_settings("discrete", cycles=5), scripted_decider(reply), seed=0)
    assert result.parse_failures == 5 * 4
    assert all(cycle.failed == [1, 3, 5, 7] for cycle in result.cycles)
    assert all(cycle.moves[1] == 0.0 and cycle.moves[0] == 1.0 for cycle in result.cycles)
    first, last = result.start.heights, result.cycles[-1].heights
    assert [last[i] for i in (1, 3, 5, 7)] == [first[i] for i in (1, 3, 5, 7)]


async def test_seeds_make_episodes_reproducible() -> None:
    settings = EpisodeSettings(num_pistons=6, max_cycles=15)  # random drop and spin
    runs = [await play_episode(settings, scripted_decider(ramp_reply), seed=s) for s in (3, 3, 4)]
    logs = [[c.ball_x for c in r.cycles] for r in runs]
    assert logs[0] == logs[1] != logs[2]


async def test_a_decider_must_answer_for_every_piston() -> None:
    async def short(cycle: int, observations: list[str], state: PhysicsState) -> list[str]:
        return ["up"]

    with pytest.raises(EnvError, match="got 1 replies for 8 pistons"):
        await play_episode(_settings("discrete"), short, seed=0)


def test_step_api_plays_cycle_by_cycle() -> None:
    config = PistonballConfig(num_pistons=4, max_cycles=2, random_rotate=False, random_drop=False)
    env = PistonballEnv(config)
    first = env.reset({"seed": 0})
    assert list(first) == env.agent_ids == ["piston_0", "piston_1", "piston_2", "piston_3"]
    assert first["piston_3"].startswith("piston_3 (4 of 4 from the left wall), cycle 1 of 2.")
    assert env.step("piston_0", "stay") == ("", 0.0, False, {"waiting": True})
    with pytest.raises(EnvError, match="It is piston_1's turn"):
        env.step("piston_2", "up")
    env.step("piston_1", "what?")
    env.step("piston_2", "stay")
    observation, reward, done, info = env.step("piston_3", "stay")
    assert observation.startswith("piston_3 (4 of 4 from the left wall), cycle 2 of 2.")
    assert not done
    assert info["parse_failures"] == 1
    assert reward == pytest.approx(-0.1)  # the ball rests: only the time penalty
    assert set(info["observations"]) == set(env.agent_ids)
    for agent in env.agent_ids:
        result = env.step(agent, "stay")
    assert result[2] is True  # max_cycles reached
    with pytest.raises(EnvError, match="reset"):
        env.step("piston_0", "up")
