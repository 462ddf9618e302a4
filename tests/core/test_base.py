"""The ABCs: sync and async sides, default policies keyed by the env's ids."""

import asyncio
import threading
from typing import Any

from langmarl.core.base import BaseEnvironment, BaseReward, LLMAgent
from langmarl.core.records import Trajectory
from langmarl.testing import ScriptedLLM


class SyncEnv(BaseEnvironment):
    @property
    def agent_ids(self) -> list[str]:
        return ["left", "right"]

    def reset(self, task: dict[str, Any]) -> dict[str, str]:
        return {a: "go" for a in self.agent_ids}

    def step(self, agent_id: str, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        return "", 0.0, True, {}

    def collect_trajectory(self, policies: dict[str, str], task: dict[str, Any]) -> Trajectory:
        self.thread = threading.current_thread()
        return Trajectory(task=task, reward=len(policies), agent_ids=self.agent_ids)


class AsyncEnv(SyncEnv):
    async def collect_trajectory(  # type: ignore[override]
        self, policies: dict[str, str], task: dict[str, Any]
    ) -> Trajectory:
        await asyncio.sleep(0)
        return Trajectory(task=task, reward=7.0)


async def test_sync_collect_runs_in_a_worker_thread() -> None:
    env = SyncEnv()
    traj = await env.acollect_trajectory(env.default_policies(), {"q": 1})
    assert traj.reward == 2.0
    assert env.thread is not threading.main_thread()


async def test_async_collect_is_awaited() -> None:
    traj = await AsyncEnv().acollect_trajectory({}, {})
    assert traj.reward == 7.0


def test_default_policies_use_the_env_ids() -> None:
    policies = SyncEnv().default_policies()
    assert list(policies) == ["left", "right"]
    assert "left" in policies["left"]


async def test_llm_agent_sends_policy_as_system_prompt() -> None:
    llm = ScriptedLLM(["42"])
    agent = LLMAgent(llm)
    assert await agent.aact("question", "be brief") == "42"
    messages = llm.backend.requests[0].messages
    assert messages[0] == {"role": "system", "content": "be brief"}


async def test_reward_async_side_defaults_to_sync() -> None:
    class Len(BaseReward):
        def compute(self, trajectory: Trajectory) -> float:
            return float(len(trajectory.steps))

    assert await Len().acompute(Trajectory(steps=[{"agent_id": "a"}])) == 1.0
