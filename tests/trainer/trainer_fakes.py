"""A tiny environment and scripted components for trainer tests."""

from __future__ import annotations

import random
from typing import Any

from langmarl.config import LanguageTaskConfig
from langmarl.core.base import BaseEnvironment
from langmarl.core.records import Trajectory
from langmarl.llm.types import ChatRequest, message_text
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.testing.roles import role_of_system, role_responder
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer

AGENTS = ["drafter", "finisher"]

QA_STUB_REPLY = role_responder(
    {
        "critic": '{"researcher": "quote the fact", "answerer": "one word"}',
        "rewrite": "You answer with one word after quoting the fact from the context.",
        "gradient": "Quote the fact, then answer in one word.",
        "aggregate": "Quote the fact, then answer in one word.",
        "actor": "Answer: Paris",
    }
)
"""An `OpenAIStub` responder for the language env's qa task: every role answers sensibly."""


class EchoEnv(BaseEnvironment):
    """Two agents in sequence; reward 1 when the finisher's answer contains the task's
    target word. Agent ids are deliberately not agent_1..N."""

    name = "echo"

    @property
    def agent_ids(self) -> list[str]:
        return list(AGENTS)

    def agent_roles(self) -> dict[str, str]:
        return {"drafter": "drafts", "finisher": "answers"}

    def describe(self) -> str:
        return "Say the target word."

    def sample_tasks(self, n: int, *, split: str = "train", rng: random.Random | None = None):
        rng = rng or random.Random(0)
        return [{"question": f"word {rng.randrange(100)}", "target": "yes"} for _ in range(n)]

    def reset(self, task: dict[str, Any]) -> dict[str, str]:
        return {a: task["question"] for a in AGENTS}

    def step(self, agent_id: str, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        return action, 0.0, agent_id == AGENTS[-1], {}

    async def collect_trajectory(self, policies: dict[str, str], task: dict[str, Any]):  # type: ignore[override]
        assert self.llm is not None
        steps, seen = [], task["question"]
        for agent_id in AGENTS:
            action = await self.llm.achat(policies[agent_id], seen)
            steps.append({"agent_id": agent_id, "observation": seen, "action": action})
            seen = f"{seen}\n{agent_id}: {action}"
        reward = 1.0 if task["target"] in steps[-1]["action"] else 0.0
        return Trajectory(task=task, steps=steps, reward=reward, agent_ids=AGENTS)


def role_of(request: ChatRequest) -> str:
    return role_of_system(message_text(request.messages[0]) if request.messages else "")


def default_reply(request: ChatRequest) -> str:
    return {
        "critic": '{"drafter": "be shorter", "finisher": "say yes"}',
        "aggregate": "Always say yes.",
        "rewrite": "You are a careful agent. Always answer yes when asked.",
        "gradient": "Say yes next time.",
        "actor": "yes",
    }[role_of(request)]


def qa_team_reply(request: ChatRequest) -> str:
    """A QA team that answers "Paris" and a critic that gives each agent a line of credit."""
    role = role_of(request)
    if role == "critic":
        return '{"researcher": "find the fact", "answerer": "answer briefly"}'
    if role == "actor":
        return "Answer: Paris"
    return default_reply(request)


def make_parts(
    tmp_path: Any,
    reply: Any = default_reply,
    latency: float = 0.0,
    retries: int = 0,
    **config: Any,
) -> tuple[LanguageTaskConfig, EchoEnv, CentralizedCritic, PolicyGradientOptimizer]:
    """Config, env, critic and optimizer sharing one scripted backend (the client retries
    a retryable failure ``retries`` times)."""
    fields = {
        "exp_name": "test",
        "num_iterations": 2,
        "trajectories_per_iteration": 3,
        "runs_dir": str(tmp_path / "runs"),
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "seed": 1,
        "optimizer_workers": 4,
        **config,
    }
    cfg = LanguageTaskConfig(**fields)
    llm_config = scripted_config(max_retries=retries, retry_initial_wait=0.0)
    llm = ScriptedLLM(reply, latency=latency, config=llm_config)
    env = EchoEnv()
    env.set_llm(llm)
    critic = CentralizedCritic(cfg, llm=llm)
    optimizer = PolicyGradientOptimizer(scripted_config(), llm=llm)
    return cfg, env, critic, optimizer


def count_peaks(backend: Any) -> dict[str, int]:
    """Wrap ``backend.complete`` to record, per role, the most calls in flight at once."""
    in_flight: dict[str, int] = {}
    peaks: dict[str, int] = {}
    original = backend.complete

    async def counting(request: Any) -> Any:
        role = role_of(request)
        in_flight[role] = in_flight.get(role, 0) + 1
        peaks[role] = max(peaks.get(role, 0), in_flight[role])
        try:
            return await original(request)
        finally:
            in_flight[role] -= 1

    backend.complete = counting
    return peaks
