"""A `BaseEnvironment` subclass written to the LangMARL reference (issue 42, item 7): three
methods, no `agent_ids`, no `name`, no `__init__` of its own. It is built by the registry,
and the reference's `MonteCarloTrainer(config, env, critic, optimizer)` trains it."""

from pathlib import Path
from typing import Any

from langmarl.config import LanguageTaskConfig
from langmarl.core.base import BaseEnvironment
from langmarl.core.records import Trajectory
from langmarl.envs.registry import EnvRegistry
from langmarl.llm.types import ChatRequest, message_text
from langmarl.store import LocalStore
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.testing.roles import role_of_system
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import MonteCarloTrainer

DEFAULT_IDS = ["agent_1", "agent_2", "agent_3"]


class RelayEnv(BaseEnvironment):
    """Each agent in turn adds to the answer; reward 1 when the last one says "yes"."""

    def reset(self, task: dict[str, Any]) -> dict[str, str]:
        return {"agent_1": task.get("question", "Say yes.")}

    def step(self, agent_id: str, action: str) -> tuple[str, float, bool, dict[str, Any]]:
        return action, 0.0, False, {}

    def collect_trajectory(self, policies: dict[str, str], task: dict[str, Any]) -> Trajectory:
        seen, steps = self.reset(task)["agent_1"], []
        for agent_id, policy in policies.items():
            action = self.llm.chat(policy, seen)  # type: ignore[union-attr]
            steps.append({"agent_id": agent_id, "observation": seen, "action": action})
            seen = f"{seen}\n{agent_id}: {action}"
        reward = 1.0 if "yes" in steps[-1]["action"] else 0.0
        return Trajectory(task=task, steps=steps, reward=reward)


def reply(request: ChatRequest) -> str:
    role = role_of_system(message_text(request.messages[0]))
    return {
        "critic": '{"agent_1": "be brief", "agent_2": "agree", "agent_3": "say yes"}',
        "aggregate": "Always say yes.",
        "rewrite": "You are a careful agent. Always answer yes.",
        "gradient": "Say yes next time.",
        "actor": "yes",
    }[role]


def test_a_reference_style_env_is_built_by_the_registry_with_default_agents() -> None:
    registry = EnvRegistry()
    registry.register("relay", RelayEnv)
    config = LanguageTaskConfig(num_agents=3)
    env = registry.make("relay", config)
    assert isinstance(env, RelayEnv) and env.name == "RelayEnv" and env.llm is None
    assert env.agent_ids == ["agent_1", "agent_2"]  # until a run sizes its team
    env.size_team(config.num_agents)
    assert env.agent_ids == DEFAULT_IDS
    assert list(env.default_policies()) == DEFAULT_IDS
    assert env.splits is None and env.judge_llm is None and env.run_kind == "language"


def test_a_reference_style_env_trains_one_iteration(tmp_path: Path) -> None:
    config = LanguageTaskConfig(
        exp_name="relay", num_agents=3, num_iterations=1, trajectories_per_iteration=2,
        runs_dir=str(tmp_path), seed=3, validate_updates=False,
    )  # fmt: skip
    llm = ScriptedLLM(reply, config=scripted_config(max_retries=0))
    env = RelayEnv()
    env.set_llm(llm)
    critic = CentralizedCritic(config, llm=llm)
    optimizer = PolicyGradientOptimizer(scripted_config(), llm=llm)
    trainer = MonteCarloTrainer(config, env, critic, optimizer, callbacks=[])

    metrics = trainer.train()

    assert len(metrics) == 1 and metrics[0]["avg_reward"] == 1.0
    info = LocalStore(tmp_path).run_info("relay")
    assert info["env"] == "RelayEnv" and info["agent_ids"] == DEFAULT_IDS
    assert info["status"] == "completed" and info["kind"] == "language"
    policies = trainer.checkpoint.get_policies(1)
    assert list(policies) == DEFAULT_IDS
    assert all("Always answer yes." in policy for policy in policies.values())
    usage = trainer.ledger.by_role()
    assert {"actor", "critic", "optimizer"} <= set(usage)
    assert usage["actor"]["calls"] == 2 * len(DEFAULT_IDS)
