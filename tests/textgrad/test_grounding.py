"""Grounded feedback: the verifier's facts reach the critic's prompt, and asking for them
where there are none is a clear error."""

from pathlib import Path
from typing import Any

import pytest

from langmarl.config import LanguageTaskConfig
from langmarl.core.errors import ConfigError
from langmarl.core.records import Trajectory
from langmarl.envs.language.env import LanguageEnv
from langmarl.llm.types import ChatRequest, message_text
from langmarl.testing import ScriptedLLM
from langmarl.testing.roles import role_of_system
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.textgrad.grounding import check_grounding, format_facts
from langmarl.trainer import MonteCarloTrainer

FACTS = ["Expected answer: 'Paris'; the team's final answer: 'Lyon'.", "Exact match: no."]
TRAJ = Trajectory(
    task={"question": "Capital of France?", "ground_truth": "Paris"},
    steps=[{"agent_id": "researcher", "action": "hm"}, {"agent_id": "answerer", "action": "Lyon"}],
    agent_ids=["researcher", "answerer"],
    metadata={"verifier_facts": FACTS},
)


def _prompt(grounded: str, prompts_dir: Path | None = None) -> str:
    config = LanguageTaskConfig(grounded_feedback=grounded)
    critic = CentralizedCritic(config, prompts_dir, llm=ScriptedLLM(["{}"]))
    return critic.build_prompt(TRAJ)


def test_the_facts_are_in_the_critic_prompt_before_the_question() -> None:
    prompt = _prompt("auto")
    assert "Facts established by the task's verifier" in prompt
    assert f"- {FACTS[0]}" in prompt and f"- {FACTS[1]}" in prompt
    assert prompt.index("Exact match: no.") < prompt.index("Assign credit")
    assert "do not quote the expected answer" in prompt


def test_off_leaves_them_out_and_no_facts_leave_the_prompt_unchanged() -> None:
    assert "verifier" not in _prompt("off")
    bare = TRAJ.model_copy(update={"metadata": {}})
    critic = CentralizedCritic(LanguageTaskConfig(), llm=ScriptedLLM(["{}"]))
    assert "verifier" not in critic.build_prompt(bare)
    assert "\n\n\n" not in critic.build_prompt(bare)


def test_a_custom_template_without_the_slot_gets_the_facts_appended(tmp_path: Path) -> None:
    (tmp_path / "central_credit.txt").write_text("Judge $agent_ids:\n$trajectory")
    prompt = _prompt("on", tmp_path)
    assert prompt.startswith("Judge researcher, answerer:") and prompt.endswith(
        "give advice that also helps on other tasks.\n"
    )


def test_true_and_false_mean_on_and_off() -> None:
    assert LanguageTaskConfig(grounded_feedback=True).grounded_feedback == "on"
    assert LanguageTaskConfig.from_dict({"grounded_feedback": False}).grounded_feedback == "off"
    with pytest.raises(ConfigError, match="grounded_feedback"):
        LanguageTaskConfig.from_dict({"grounded_feedback": "always"})


def test_on_without_a_verifier_is_a_config_error_auto_is_not() -> None:
    writing = LanguageEnv(LanguageTaskConfig(task_type="writing"))
    with pytest.raises(ConfigError, match=r"grounded_feedback='on'.*task_type='writing'"):
        check_grounding("on", writing)
    check_grounding("auto", writing)
    check_grounding("off", writing)
    check_grounding("on", LanguageEnv(LanguageTaskConfig(task_type="math")))
    assert format_facts([]) == ""


def test_the_trainer_refuses_on_for_writing(tmp_path: Path) -> None:
    config = LanguageTaskConfig(task_type="writing", grounded_feedback="on", runs_dir=str(tmp_path))
    llm = ScriptedLLM(["x"])
    env = LanguageEnv(config, llm=llm)
    critic = CentralizedCritic(config, llm=llm)
    with pytest.raises(ConfigError, match="set grounded_feedback='auto'"):
        MonteCarloTrainer(config, env, critic, PolicyGradientOptimizer(config.get_optimizer_llm()))


def test_a_training_run_grounds_the_critic_in_expected_vs_got(tmp_path: Path) -> None:
    def reply(request: ChatRequest) -> Any:
        role = role_of_system(message_text(request.messages[0]))
        return {
            "critic": '{"researcher": "quote the context", "answerer": "answer from it"}',
            "actor": "I think it is Lyon.",  # no 'Answer:' line: a format violation too
        }.get(role, "You answer from the context, on an 'Answer:' line.")

    config = LanguageTaskConfig(
        task_type="qa",
        exp_name="grounded",
        num_iterations=1,
        trajectories_per_iteration=2,
        validation_size=2,
        runs_dir=str(tmp_path),
        seed=0,
    )
    llm = ScriptedLLM(reply)
    env = LanguageEnv(config, llm=llm)
    critic = CentralizedCritic(config, llm=llm)
    optimizer = PolicyGradientOptimizer(config.get_optimizer_llm(), llm=llm)
    MonteCarloTrainer(config, env, critic, optimizer, callbacks=[]).train()
    prompts = [
        message_text(r.messages[-1])
        for r in llm.backend.requests
        if role_of_system(message_text(r.messages[0])) == "critic"
    ]
    assert len(prompts) == 2
    for prompt in prompts:
        assert (
            "Expected answer: '" in prompt
            and "the team's final answer: 'I think it is Lyon.'" in prompt
        )
        assert "Format violation: the final reply has no 'Answer: ...' line" in prompt
