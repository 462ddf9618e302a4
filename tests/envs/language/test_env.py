"""LanguageEnv: ids from the env, sequential collaboration, step API, registry."""

import pytest

from langmarl.config import LanguageTaskConfig
from langmarl.core.errors import EnvError
from langmarl.envs.language.env import LanguageEnv, team_ids
from langmarl.envs.registry import make_env
from langmarl.testing import ScriptedLLM


def test_registered_and_built_from_config() -> None:
    env = make_env("language", LanguageTaskConfig(task_type="math", num_agents=2))
    assert isinstance(env, LanguageEnv)
    assert env.agent_ids == ["analyst", "finalizer"]
    assert set(env.default_policies()) == set(env.agent_ids)


def test_team_ids_grow_without_inventing_agent_n() -> None:
    assert team_ids("qa", 1) == ["answerer"]
    assert team_ids("coding", 5) == ["planner", "coder", "reviewer", "contributor_4", "implementer"]


async def test_agents_act_in_sequence_and_see_earlier_work() -> None:
    llm = ScriptedLLM(["2 plus 3 makes 5", "Answer: 5"])
    env = LanguageEnv(LanguageTaskConfig(task_type="math"), llm=llm)
    task = {"id": "t", "task_type": "math", "question": "What is 2 + 3?", "ground_truth": "5"}
    traj = await env.acollect_trajectory(env.default_policies(), task)
    assert [s.agent_id for s in traj.steps] == env.agent_ids
    assert traj.reward == 1.0 and traj.metadata["reward_details"]["correct"] is True
    second = llm.backend.requests[1].messages[-1]["content"]
    assert "[analyst]\n2 plus 3 makes 5" in second and "Answer:" in second
    assert "ground_truth" not in second and "'5'" not in second


async def test_policies_must_use_the_env_ids() -> None:
    env = LanguageEnv(LanguageTaskConfig(), llm=ScriptedLLM(["x"]))
    with pytest.raises(EnvError, match="agent_1"):
        await env.acollect_trajectory({"agent_1": "p", "agent_2": "q"}, env.splits["train"][0])


def test_step_api_enforces_turns_and_scores_at_the_end() -> None:
    env = LanguageEnv(LanguageTaskConfig(task_type="qa"))
    task = {"task_type": "qa", "question": "Capital of France?", "ground_truth": "Paris"}
    with pytest.raises(EnvError, match="reset"):
        env.step("researcher", "x")
    first = env.reset(task)
    assert "Capital of France?" in first["researcher"] and first["answerer"] == ""
    with pytest.raises(EnvError, match="researcher's turn"):
        env.step("answerer", "x")
    obs, reward, done, _ = env.step("researcher", "It is Paris.")
    assert not done and "It is Paris." in obs
    _, reward, done, info = env.step("answerer", "Answer: Paris")
    assert done and reward == 1.0 and info["exact_match"] == 1.0


def test_test_split_and_unknown_split() -> None:
    env = LanguageEnv(LanguageTaskConfig(task_type="qa", seed=2))
    test_ids = {t["id"] for t in env.sample_tasks(5, split="test")}
    assert test_ids <= {t["id"] for t in env.splits["test"]}
    with pytest.raises(EnvError, match="split"):
        env.sample_tasks(1, split="dev")
