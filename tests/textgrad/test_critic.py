"""CentralizedCritic with a scripted LLM."""

from pathlib import Path

import pytest

from langmarl.config import LanguageTaskConfig
from langmarl.core.errors import ConfigError, LLMError
from langmarl.core.records import Trajectory
from langmarl.testing import ScriptedLLM
from langmarl.textgrad import CentralizedCritic

TRAJ = Trajectory(
    task={"question": "2+3?", "ground_truth": "5"},
    steps=[{"agent_id": "solver", "action": "5"}, {"agent_id": "checker", "action": "5"}],
    reward=1.0,
    agent_ids=["solver", "checker"],
)
POLICIES = {"solver": "s", "checker": "c"}


def _critic(paradigm: str, replies: list, **kw: object) -> CentralizedCritic:
    config = LanguageTaskConfig(paradigm=paradigm)
    return CentralizedCritic(config, llm=ScriptedLLM(replies), **kw)  # type: ignore[arg-type]


async def test_credit_prompt_uses_env_ids_roles_and_context() -> None:
    critic = _critic("central_credit", ['{"solver": "good", "checker": "redundant"}'])
    evaluation = await critic.aevaluate(TRAJ, POLICIES, "Solve math.", {"solver": "solves"})
    assert evaluation.per_agent == {"solver": "good", "checker": "redundant"}
    assert evaluation.parse_status == "json" and evaluation.paradigm == "central_credit"
    prompt = critic.llm.backend.requests[0].messages[-1]["content"]
    assert "Solve math." in prompt and "- solver: solves" in prompt
    assert '"checker": "..."' in prompt and "ground_truth" not in prompt


def test_global_gives_everyone_the_same_evaluation_sync() -> None:
    evaluation = _critic("central_global", ["Team did well."]).evaluate(TRAJ, POLICIES)
    assert evaluation["per_agent"] == {"solver": "Team did well.", "checker": "Team did well."}
    assert evaluation["raw_response"] == "Team did well."


async def test_unparseable_reply_takes_the_fallback() -> None:
    evaluation = await _critic("central_credit", ["no structure at all"]).aevaluate(TRAJ, POLICIES)
    assert evaluation.parse_status == "fallback"
    assert evaluation.per_agent["checker"] == "no structure at all"


async def test_llm_failure_is_recorded_not_raised() -> None:
    critic = _critic("central_credit", [LLMError("scripted", "m", "boom")])
    evaluation = await critic.aevaluate(TRAJ, POLICIES)
    assert evaluation.error and "boom" in evaluation.error and evaluation.per_agent == {}


def test_prompts_dir_overrides_templates(tmp_path: Path) -> None:
    (tmp_path / "central_credit.txt").write_text("CUSTOM $agent_ids {json braces}")
    critic = _critic("central_credit", ["x"], prompts_dir=tmp_path)
    assert critic.build_prompt(TRAJ) == "CUSTOM solver, checker {json braces}"
    with pytest.raises(ConfigError, match="not a directory"):
        _critic("central_credit", ["x"], prompts_dir=tmp_path / "nope")
