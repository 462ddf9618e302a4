"""PistonballEnv with a scripted LLM: concurrency, trajectories, registry, config."""

from __future__ import annotations

import random

import pytest

from langmarl.config.base import BaseConfig
from langmarl.config.envs import PistonballConfig
from langmarl.config.loading import load_config
from langmarl.core.errors import ConfigError, EnvError
from langmarl.envs.pistonball.env import PistonballEnv
from langmarl.envs.registry import make_env
from langmarl.llm.types import ChatRequest, message_text
from langmarl.testing.scripted import ScriptedLLM

CONFIG = PistonballConfig(num_pistons=6, max_cycles=4, random_drop=False, random_rotate=False)


def _recording_llm(reply: str) -> tuple[object, list[int]]:
    """A scripted client that notes how many requests had arrived when each was answered."""
    seen: list[int] = []
    holder: dict[str, object] = {}

    def answer(request: ChatRequest) -> str:
        seen.append(len(holder["llm"].backend.requests))  # type: ignore[attr-defined]
        return reply

    holder["llm"] = ScriptedLLM(answer, latency=0.01)
    return holder["llm"], seen


async def test_a_cycles_requests_are_all_in_flight_together() -> None:
    llm, seen = _recording_llm("stay")
    env = PistonballEnv(CONFIG, llm=llm)  # type: ignore[arg-type]
    trajectory = await env.collect_trajectory(env.default_policies(), {"seed": 0})
    assert trajectory.metadata["cycles"] == 4
    # Every answer of cycle k came after all 6 requests of cycle k had been sent.
    assert seen == [6] * 6 + [12] * 6 + [18] * 6 + [24] * 6


async def test_one_at_a_time_when_not_concurrent() -> None:
    llm, seen = _recording_llm("stay")
    env = PistonballEnv(CONFIG, llm=llm, concurrent=False)  # type: ignore[arg-type]
    await env.collect_trajectory(env.default_policies(), {"seed": 0})
    assert seen == list(range(1, 25))


async def test_each_piston_asks_with_its_own_policy_and_observation() -> None:
    llm = ScriptedLLM(["up"])
    env = PistonballEnv(CONFIG.model_copy(update={"max_cycles": 1}), llm=llm)
    policies = {agent: f"policy of {agent}" for agent in env.agent_ids}
    await env.collect_trajectory(policies, {"seed": 0})
    requests = llm.backend.requests  # type: ignore[attr-defined]
    systems = [message_text(r.messages[0]) for r in requests]
    users = [message_text(r.messages[1]) for r in requests]
    assert systems == [f"policy of piston_{i}" for i in range(6)]
    assert [u.split(" ")[0] for u in users] == [f"piston_{i}" for i in range(6)]


async def test_trajectory_summarises_each_piston_by_segment() -> None:
    config = CONFIG.model_copy(update={"max_cycles": 10, "critic_segments": 3})

    def reply(request: ChatRequest) -> str:
        return "garbage" if message_text(request.messages[1]).startswith("piston_2 (") else "stay"

    env = PistonballEnv(config, llm=ScriptedLLM(reply))
    trajectory = await env.collect_trajectory(env.default_policies(), {"seed": 7})
    assert trajectory.agent_ids == [f"piston_{i}" for i in range(6)]
    assert len(trajectory.steps) == 3 * 6
    assert [s.info["cycles"] for s in trajectory.steps[::6]] == [[1, 3], [4, 7], [8, 10]]
    step = trajectory.steps[2]  # piston_2, cycles 1-3
    assert step.agent_id == "piston_2"
    assert step.action.startswith("cycles 1-3: up 0, stay 3, down 0; 3 unreadable replies")
    rewards = trajectory.metadata["log"]["reward"]
    assert step.reward == pytest.approx(sum(rewards[:3]), abs=1e-3)
    assert f"team reward {step.reward:+.1f}; reply e.g. 'garbage'" in step.action
    assert step.observation.startswith("piston_2 (3 of 6 from the left wall), cycle 1 of 10.")
    meta = trajectory.metadata
    assert meta["parse_failures"] == 10
    assert meta["parse_failures_by_agent"]["piston_2"] == 10
    assert meta["parse_failures_by_agent"]["piston_0"] == 0
    assert len(meta["log"]["ball_x"]) == 10 and meta["terminated"] is False
    assert trajectory.reward == pytest.approx(sum(rewards), abs=1e-3)
    assert trajectory.task == {"seed": 7}


async def test_collect_needs_an_llm_and_every_pistons_policy() -> None:
    env = PistonballEnv(CONFIG)
    with pytest.raises(EnvError, match="set_llm"):
        await env.collect_trajectory(env.default_policies(), {})
    env.set_llm(ScriptedLLM(["up"]))
    with pytest.raises(EnvError, match=r"No policy for agents \[.piston_5.\]"):
        policies = env.default_policies()
        del policies["piston_5"]
        await env.collect_trajectory(policies, {})


def test_registry_builds_the_env_from_its_config() -> None:
    env = make_env("pistonball", PistonballConfig(num_pistons=4, action_mode="continuous"))
    assert isinstance(env, PistonballEnv)
    assert env.agent_ids == ["piston_0", "piston_1", "piston_2", "piston_3"]
    assert "number from -1" in env.default_policies()["piston_3"]
    assert "4 pistons" in env.describe() and "piston_0 next to the left wall" in env.describe()
    assert env.agent_roles()["piston_1"] == "piston 2 of 4 from the left wall"
    with pytest.raises(ConfigError, match="needs a PistonballConfig"):
        make_env("pistonball", BaseConfig())


def test_tasks_are_seeds_drawn_from_the_rng() -> None:
    env = PistonballEnv(CONFIG)
    tasks = env.sample_tasks(3, rng=random.Random(1))
    assert tasks == env.sample_tasks(3, rng=random.Random(1))
    assert len({t["seed"] for t in tasks}) == 3


def test_configs_in_the_repo_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pathlib import Path

    root = Path(__file__).parents[3] / "configs" / "pistonball"
    tiny, paper = load_config(root / "tiny.json"), load_config(root / "paper.json")
    assert isinstance(tiny, PistonballConfig) and isinstance(paper, PistonballConfig)
    assert (paper.num_pistons, paper.max_cycles, paper.num_agents) == (20, 125, 20)
    assert tiny.num_pistons * tiny.max_cycles <= 40


def test_config_keeps_one_agent_per_piston() -> None:
    assert PistonballConfig(num_pistons=7).num_agents == 7
    with pytest.raises(ValueError, match=r"num_agents .* must equal num_pistons"):
        PistonballConfig(num_pistons=7, num_agents=3)
    with pytest.raises(ValueError, match="greater than or equal to 2"):
        PistonballConfig(num_pistons=1)


async def test_concurrent_episodes_do_not_share_state() -> None:
    import asyncio

    config = PistonballConfig(num_pistons=5, max_cycles=12)  # random drop and spin

    def reply(request: ChatRequest) -> str:
        return ("up", "down", "stay")[len(message_text(request.messages[1])) % 3]

    env = PistonballEnv(config, llm=ScriptedLLM(reply, latency=0.001))
    policies = env.default_policies()
    alone = [await env.collect_trajectory(policies, {"seed": s}) for s in (1, 2, 3)]
    together = await asyncio.gather(
        *(env.collect_trajectory(policies, {"seed": s}) for s in (1, 2, 3))
    )
    assert [t.metadata["log"] for t in together] == [t.metadata["log"] for t in alone]
    assert len({str(t.metadata["log"]["ball_x"]) for t in alone}) == 3
