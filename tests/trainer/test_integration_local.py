"""One real iteration of the language trainer, with validated updates and grounded feedback
on (the defaults): on the embedded model for qa (tiny budgets), and for math and coding, whose
rewards and verifier facts are their own, over a real HTTP test server that answers each role
(the model adds nothing task-specific, and its ~5 CPU-s of generation per task bought none)."""

import json
from pathlib import Path
from typing import Any

import pytest

from langmarl.api import build_trainer
from langmarl.config import LanguageTaskConfig
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.roles import role_responder

TEAMS = {  # the env's agent ids, and an actor's reply: right for math, wrong for coding
    "math": (("analyst", "finalizer"), "The sum is 5.\nAnswer: 5"),
    "coding": (("planner", "implementer"), "```python\ndef add(a, b):\n    return a - b\n```"),
}


def _config(tmp_path: Path, task_type: str, llm: dict[str, Any]) -> LanguageTaskConfig:
    return LanguageTaskConfig(
        exp_name=f"real-{task_type}",
        task_type=task_type,
        num_agents=2,
        num_iterations=1,
        trajectories_per_iteration=1,
        validation_size=1,  # 1 + 2 candidates = 3 validation episodes
        llm=llm,
        runs_dir=str(tmp_path / "runs"),
        checkpoint_dir=str(tmp_path / "ckpt"),
        seed=0,
    )


def _check_one_iteration(config: LanguageTaskConfig) -> None:
    """Train one iteration: the episode, usage by role, the task's reward details and verifier
    facts, the validation episodes and the checkpoint of the accepted candidates."""
    trainer = build_trainer(config)
    stats = trainer.train()[0]
    assert stats["num_episodes"] == 1 and stats["failed_episodes"] == 0
    assert 0.0 <= stats["avg_reward"] <= 1.0
    for role in ("actor", "critic", "optimizer"):
        assert stats["usage_by_role"][role]["calls"] > 0
        assert stats["usage_by_role"][role]["output_tokens"] > 0
    assert stats["total_tokens"] == sum(u["total_tokens"] for u in stats["usage_by_role"].values())
    trajectory = trainer.trajectories.load(0)[0]
    assert [s.agent_id for s in trajectory.steps] == trainer.env.agent_ids
    details = trajectory.metadata["reward_details"]
    assert {"qa": "f1", "math": "correct", "coding": "passed"}[config.task_type] in details
    assert trajectory.metadata["verifier_facts"]  # grounded feedback had facts to show
    assert stats["validation_episodes"] == 3 and 0.0 <= stats["validation_score"] <= 1.0
    decisions = trainer.store.load_update_decisions(trainer.run_id)
    assert [d["agent_id"] for d in decisions] == trainer.env.agent_ids
    kept = trainer.checkpoint.get_policies(1)
    for d in decisions:  # the checkpoint holds exactly the accepted candidates
        if d["score"] is not None:
            assert (kept[d["agent_id"]] == d["policy"]) is d["accepted"]
    assert set(trainer.checkpoint.get_policies(1)) == set(trainer.env.agent_ids)
    assert trainer.store.run_info(trainer.run_id)["status"] == "completed"


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_one_real_iteration_on_the_embedded_model(tmp_path: Path) -> None:
    llm = {"preset": "local", "max_tokens": 12, "temperature": 0.0}
    _check_one_iteration(_config(tmp_path, "qa", llm))


@pytest.mark.parametrize("task_type", ["math", "coding"])
def test_one_iteration_of_the_other_tasks_over_http(tmp_path: Path, task_type: str) -> None:
    (first, second), answer = TEAMS[task_type]
    reply = role_responder({
        "critic": json.dumps({first: "show the working", second: "check the result"}),
        "rewrite": f"You are the {task_type} agent: work step by step, then give the result.",
        "gradient": "Check the result against the question before giving it.",
        "aggregate": "Check the result against the question before giving it.",
        "actor": answer,
    })  # fmt: skip
    with OpenAIStub(responder=reply) as stub:
        _check_one_iteration(_config(tmp_path, task_type, stub.llm_config()))
