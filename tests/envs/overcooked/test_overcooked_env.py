"""OvercookedEnv with scripted cooks: soups, coordination, observations, credit, step API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from langmarl.config.envs import OvercookedConfig
from langmarl.core.errors import ConfigError, EnvError
from langmarl.core.records import Trajectory
from langmarl.envs.overcooked.env import COOK_IDS, OvercookedEnv, overcooked_training_hooks
from langmarl.envs.overcooked.layouts import LAYOUTS
from langmarl.envs.registry import make_env
from langmarl.llm.types import ChatRequest, message_text
from langmarl.testing.scripted import ScriptedLLM
from langmarl.textgrad.credit import parse_credit
from langmarl.textgrad.critic import CentralizedCritic

ONE_SOUP = [
    "pick up onion",
    "put onion in pot",
    "pick up onion",
    "put onion in pot",
    "pick up onion",
    "put onion in pot",
    "start cooking",
    "pick up dish",
    "fill dish with soup",
    "deliver soup",
]


def scripted_cooks(scripts: dict[str, list[str]]) -> object:
    """A scripted LLM: each cook (found by its id in the policy) replies its script in
    order, then ``wait``."""
    queues: dict[str, Iterator[str]] = {cook: iter(lines) for cook, lines in scripts.items()}

    def reply(request: ChatRequest) -> str:
        system = message_text(request.messages[0])
        cook = next(c for c in COOK_IDS if c in system)
        return next(queues[cook], "wait") if cook in queues else "wait"

    return ScriptedLLM(reply)


def play(env: OvercookedEnv, scripts: dict[str, list[str]] | None = None) -> Trajectory:
    if env.agent_ids:
        env.set_llm(scripted_cooks(scripts or {}))  # type: ignore[arg-type]
    return asyncio.run(env.collect_trajectory(env.default_policies(), {}))


def test_a_hand_coded_skill_sequence_delivers_one_soup_in_cramped_room() -> None:
    env = make_env("overcooked", OvercookedConfig(layout="cramped_room", episode_horizon=80))
    trajectory = play(env, {"cook_0": ONE_SOUP})
    assert trajectory.reward == 20.0 and trajectory.metadata["soups"] == 1
    cook_0 = [s for s in trajectory.steps if s.agent_id == "cook_0"]
    assert [s.action for s in cook_0[: len(ONE_SOUP)]] == ONE_SOUP
    assert all(s.info["result"] == "done" for s in cook_0[: len(ONE_SOUP)])
    assert trajectory.metadata["events"]["cook_0"]["soup_delivery"] == 1
    assert trajectory.metadata["events"]["cook_1"] == dict.fromkeys(
        trajectory.metadata["events"]["cook_1"], 0
    )


def test_forced_coordination_needs_both_cooks() -> None:
    def run(p0: str, p1: str) -> Trajectory:
        config = OvercookedConfig(
            layout="forced_coordination", episode_horizon=150, p0_agent=p0, p1_agent=p1
        )
        return play(OvercookedEnv(config))

    alone_on_pot_side = run("greedy", "llm")  # cook_1 (the onion side) only ever waits
    alone_on_onion_side = run("llm", "greedy")  # cook_0 (the pot side) only ever waits
    together = run("greedy", "greedy")
    assert alone_on_pot_side.reward == 0.0 and alone_on_onion_side.reward == 0.0
    assert alone_on_onion_side.metadata["events"]["cook_1"]["onion_pickup"] > 0  # it tried
    assert together.reward >= 20.0
    assert together.metadata["events"]["cook_0"]["soup_delivery"] >= 1
    assert together.metadata["events"]["cook_1"]["onion_pickup"] >= 3  # handed over


@pytest.mark.parametrize("layout", LAYOUTS)
def test_two_greedy_cooks_deliver_soup_on_every_classic_layout(layout: str) -> None:
    config = OvercookedConfig(
        layout=layout, episode_horizon=300, p0_agent="greedy", p1_agent="greedy"
    )
    env = OvercookedEnv(config)
    assert env.agent_ids == []
    trajectory = play(env)
    assert trajectory.reward >= 40.0 and trajectory.reward % 20 == 0
    assert all(step.info.get("scripted") for step in trajectory.steps)


def test_the_observation_shows_map_cooks_pots_and_reach() -> None:
    env = OvercookedEnv(OvercookedConfig(layout="cramped_room", episode_horizon=50))
    observations = env.reset({})
    assert set(observations) == {"cook_0", "cook_1"}
    text = observations["cook_0"]
    assert "Layout cramped_room, tick 0 of 50. Soups delivered: 0 (reward 0)." in text
    assert "XXPXX\nO  1O\nX0  X\nXDXSX" in text
    assert "You are cook_0 at (1, 2) facing up, holding nothing." in text
    assert "Partner cook_1 at (3, 1) holding nothing, doing: choosing." in text
    assert "Pots: pot at (2, 0): empty" in text
    assert (
        "You can reach: onion dispenser (1 steps), dish dispenser (0 steps), pot (2 steps)" in text
    )
    assert "Skills: pick up onion | pick up dish |" in text and text.endswith(
        "Reply with one skill."
    )


def test_step_api_waits_for_both_cooks_then_runs_the_kitchen() -> None:
    env = OvercookedEnv(OvercookedConfig(layout="cramped_room", episode_horizon=30))
    env.reset({})
    observation, reward, done, info = env.step("cook_0", "pick up onion")
    assert info["awaiting"] == ["cook_1"] and reward == 0.0 and not done
    with pytest.raises(EnvError, match="not choosing"):
        env.step("cook_0", "wait")
    observation, reward, done, info = env.step("cook_1", "pick up dish")
    assert info["skill"] == "pick up dish" and info["awaiting"]  # someone must choose again
    assert "holding" in observation
    _, _, _, info = env.step(info["awaiting"][0], "gibberish")
    assert info["skill"] == "wait" and "no skill named" in info["error"]


def test_failed_skills_and_unreadable_replies_reach_the_critic_in_one_section_per_cook() -> None:
    env = OvercookedEnv(OvercookedConfig(layout="cramped_room", episode_horizon=6))
    trajectory = play(env, {"cook_0": ["deliver soup"], "cook_1": ["hmm?"]})
    first = {s.agent_id: s for s in reversed(trajectory.steps)}
    assert first["cook_0"].info["error"].startswith("deliver soup failed: you hold nothing")
    assert first["cook_1"].info["error"] == "no skill named in the reply; waited one tick"
    critic = CentralizedCritic(OvercookedConfig(), llm=ScriptedLLM(["unused"]))
    prompt = critic.build_prompt(trajectory, env.describe(), env.agent_roles())
    assert prompt.count("=== Contribution of cook_0 ===") == 1
    assert prompt.count("=== Contribution of cook_1 ===") == 1
    assert "(error: deliver soup failed: you hold nothing" in prompt
    assert "0 soups delivered (reward 0) in 6 ticks." in prompt  # the MDP's facts
    reply = "Feedback for [cook_0]: fetch onions first.\n[cook_1]: name a skill."
    per_agent, status = parse_credit(reply, env.agent_ids)
    assert status == "markers"
    assert per_agent == {"cook_0": "fetch onions first.", "cook_1": "name a skill."}


def test_agent_kinds_are_mapped_and_an_all_greedy_run_is_refused() -> None:
    assert OvercookedConfig().cook_kinds() == ("llm", "llm")  # the reference default, ProAgent
    config = OvercookedConfig(p0_agent="Greedy", p1_agent="ProAgent")
    env = OvercookedEnv(config)
    assert env.agent_ids == ["cook_1"] and "cook_0 is a scripted greedy cook" in env.describe()
    with pytest.raises(ValueError, match="Did you mean 'greedy'"):
        OvercookedConfig(p0_agent="greddy")
    both = OvercookedEnv(OvercookedConfig(p0_agent="greedy", p1_agent="greedy"))
    with pytest.raises(ConfigError, match="no LLM cook to train"):
        overcooked_training_hooks(both)
    with pytest.raises(EnvError, match=r"No policy for agents \[.cook_1.\]"):
        asyncio.run(env.collect_trajectory({}, {}))


def test_episodes_run_concurrently_on_one_env() -> None:
    env = OvercookedEnv(OvercookedConfig(layout="cramped_room", episode_horizon=80))
    env.set_llm(scripted_cooks({}))

    async def both() -> list[Trajectory]:
        policies = env.default_policies()
        return list(await asyncio.gather(*(env.collect_trajectory(policies, {}) for _ in range(3))))

    trajectories = asyncio.run(both())
    assert [t.metadata["ticks"] for t in trajectories] == [80, 80, 80]
    assert all(t.agent_ids == ["cook_0", "cook_1"] for t in trajectories)
