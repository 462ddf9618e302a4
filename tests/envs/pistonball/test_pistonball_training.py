"""One real language-space iteration on Pistonball: piston credit with the embedded model
(slow), region credit against an OpenAI-compatible stub whose critic judges the regions (the
LLM path is the same real client either way; what region credit adds is the hook, the region
prompt and the mapping of each region's feedback back to its pistons)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langmarl.api import build_trainer
from langmarl.config.loading import load_config
from langmarl.envs.pistonball.env import PistonballEnv
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.roles import role_responder

TINY = Path(__file__).parents[3] / "configs" / "pistonball" / "tiny.json"

REGION_REPLY = role_responder(
    {
        "critic": "[region_0] Rise as the ball comes.\n[region_1] Stay low.",
        "gradient": "Rise when the ball is above you.",
        "aggregate": "Rise when the ball is above you.",
        "rewrite": "Rise when the ball is above you.",
        "actor": "up",
    }
)


def _train(tmp_path: Path, credit: str, llm: dict[str, Any], actor_llm: dict[str, Any]) -> Any:
    # Cheaper than tiny.json, for what is asserted here: 1 cycle (a batch of 4 actor calls),
    # critic and gradients of 16 tokens, and append updates (a 48-token rewrite was cut off and
    # fell back to append anyway: one optimizer call per piston less). On the embedded model:
    # 5.2 CPU-s with 2 cycles and 32 tokens, 3.2 so.
    overrides = {
        "runs_dir": str(tmp_path / "runs"),
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "credit": credit,
        "region_size": 2,
        "max_cycles": 1,
        "llm": llm,
        "actor_llm": actor_llm,
    }
    trainer = build_trainer(load_config(TINY, overrides))
    trainer.optimizer.update = "append"
    stats = trainer.train()[0]
    assert stats["num_episodes"] == 1 and stats["failed_episodes"] == 0
    for role in ("actor", "critic", "optimizer"):
        assert stats["usage_by_role"][role]["calls"] > 0
    # 4 pistons x 1 cycle, each an actor call
    trajectory = trainer.trajectories.load(0)[0]
    cycles = trajectory.metadata["cycles"]
    assert cycles == 1
    assert stats["usage_by_role"]["actor"]["calls"] >= 4 * cycles
    assert trajectory.agent_ids == ["piston_0", "piston_1", "piston_2", "piston_3"]
    assert {s.agent_id for s in trajectory.steps} == set(trajectory.agent_ids)
    assert 0 <= trajectory.metadata["parse_failures"] <= 4 * cycles
    assert isinstance(trainer.env, PistonballEnv)
    kept = trainer.checkpoint.get_policies(1)
    assert set(kept) == set(trajectory.agent_ids)
    assert stats["policy_updates"] == dict.fromkeys(trajectory.agent_ids, "append")
    assert trainer.store.run_info(trainer.run_id)["status"] == "completed"
    return trainer, trajectory


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_one_iteration_of_the_tiny_config_on_the_embedded_model(tmp_path: Path) -> None:
    actor_llm = {"preset": "local", "max_tokens": 4, "max_concurrency": 16}
    trainer, trajectory = _train(
        tmp_path, "piston", {"preset": "local", "max_tokens": 16}, actor_llm
    )
    evaluation = trainer.store.load_evaluation(trainer.run_id, 0, 0)
    assert set(evaluation["per_agent"]) <= set(trajectory.agent_ids)
    assert type(trainer.critic).__name__ != "RegionCredit"


def test_one_iteration_with_region_credit_gives_each_piston_its_regions_feedback(
    tmp_path: Path,
) -> None:
    with OpenAIStub(responder=REGION_REPLY) as stub:
        trainer, _ = _train(tmp_path, "region", stub.llm_config(), stub.llm_config())
        critic_prompts = [b for b in stub.bodies if "critic" in str(b["messages"][0]["content"])]
    assert type(trainer.critic).__name__ == "RegionCredit"
    assert len(critic_prompts) == 1  # the critic judged the two regions, not four pistons
    assert "Use exactly these agent ids: region_0, region_1." in str(critic_prompts[0])
    per_agent = trainer.store.load_evaluation(trainer.run_id, 0, 0)["per_agent"]
    assert per_agent["piston_0"] == per_agent["piston_1"] == "Rise as the ball comes."
    assert per_agent["piston_2"] == per_agent["piston_3"] == "Stay low."
