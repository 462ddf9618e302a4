"""The critic's view of an episode: segments, groups, and a prompt that does not grow with
the number of cycles."""

from __future__ import annotations

import pytest

from langmarl.config.envs import PistonballConfig
from langmarl.envs.pistonball.env import PistonballEnv
from langmarl.envs.pistonball.episode import CycleRecord, play_episode, scripted_decider
from langmarl.envs.pistonball.summary import (
    compact_log,
    describe_run,
    records_from_log,
    region_groups,
    segment_bounds,
)
from langmarl.testing.scripted import ScriptedLLM
from langmarl.textgrad.critic import CentralizedCritic


def test_segments_cover_every_cycle_once() -> None:
    assert segment_bounds(10, 3) == [(0, 3), (3, 7), (7, 10)]
    assert segment_bounds(2, 5) == [(0, 1), (1, 2)]
    assert segment_bounds(125, 5) == [(0, 25), (25, 50), (50, 75), (75, 100), (100, 125)]
    assert segment_bounds(0, 5) == []


def test_regions_are_contiguous_from_the_wall() -> None:
    assert region_groups(7, 3) == {"region_0": [0, 1, 2], "region_1": [3, 4, 5], "region_2": [6]}
    assert region_groups(4, 10) == {"region_0": [0, 1, 2, 3]}


def _record(cycle: int, moves: list[float], failed: list[int], ball_x: float) -> CycleRecord:
    return CycleRecord(
        cycle=cycle, observations=["o0", "o1"], replies=["up", "?? no"], moves=moves,
        failed=failed, heights=[cycle, 0], ball_x=ball_x, reward=1.5,
    )  # fmt: skip


def test_a_run_is_described_in_one_line() -> None:
    run = [_record(1, [1.0, 0.0], [1], 3.0), _record(2, [1.0, 0.0], [1], 2.5)]
    one = describe_run(run, [1], before_heights=[0, 0], before_ball=3.2)
    assert one == (
        "cycles 1-2: up 0, stay 2, down 0; 2 unreadable replies (taken as stay); "
        "height 0 -> 0 of 16; ball centre 3.2 -> 2.5 pistons from the wall, ending "
        "1.0 pistons right of you; team reward +3.0; reply e.g. '?? no'"
    )
    both = describe_run(run, [0, 1], before_heights=[0, 0], before_ball=3.2, continuous=True)
    assert both.startswith("pistons 0-1, cycles 1-2: up 2, stay 2, down 0; mean move +0.50; ")
    assert "mean height 0.0 -> 1.0 of 16" in both and "of the region's centre" in both


def test_the_compact_log_round_trips() -> None:
    records = [_record(1, [1.0, -1.0], [], 3.0), _record(2, [0.0, 0.5], [0], 2.0)]
    back = records_from_log(compact_log(records))
    assert [(r.cycle, r.moves, r.failed, r.heights, r.ball_x, r.reward) for r in back] == [
        (r.cycle, r.moves, r.failed, r.heights, r.ball_x, r.reward) for r in records
    ]


@pytest.mark.parametrize("credit", ["piston", "region"])
async def test_the_critic_prompt_does_not_grow_with_the_cycles(credit: str) -> None:
    from langmarl.envs.pistonball.credit import region_roles, region_trajectory

    lengths = []
    for cycles in (6, 36):
        config = PistonballConfig(num_pistons=8, max_cycles=cycles, credit=credit)  # type: ignore[arg-type]
        env = PistonballEnv(config)
        result = await play_episode(env.settings, scripted_decider(lambda i, s: "stay"), seed=0)
        trajectory = env.trajectory(result, {"seed": 0})
        roles = env.agent_roles()
        if credit == "region":
            trajectory = region_trajectory(trajectory, env.regions(), config.critic_segments)
            roles = region_roles(env.regions())
        critic = CentralizedCritic(config, llm=ScriptedLLM(["ok"]))
        lengths.append(len(critic.build_prompt(trajectory, env.describe(), roles)))
    assert lengths[1] < lengths[0] * 1.1  # 6x the cycles, the same 5 segments per group
    assert lengths[1] < (9000 if credit == "piston" else 4000)  # 8 sections vs 2
