"""One real language-space iteration on Pistonball with the embedded model (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmarl.api import build_trainer
from langmarl.config.loading import load_config
from langmarl.envs.pistonball.env import PistonballEnv

TINY = Path(__file__).parents[3] / "configs" / "pistonball" / "tiny.json"


@pytest.mark.slow
@pytest.mark.parametrize("credit", ["piston", "region"])
def test_one_iteration_of_the_tiny_config_on_the_embedded_model(
    tmp_path: Path, credit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One torch thread: with other work on the 2 cores, 2 threads are several times slower.
    monkeypatch.setenv("LANGMARL_TORCH_THREADS", "1")
    # Cheaper than tiny.json, for what is asserted here: 2 cycles (each a batch of 4 actor
    # calls), critic and gradients of 32 tokens, and append updates (a 48-token rewrite was
    # cut off and fell back to append anyway: one optimizer call per piston less).
    overrides = {
        "runs_dir": str(tmp_path / "runs"),
        "checkpoint_dir": str(tmp_path / "ckpt"),
        "credit": credit,
        "region_size": 2,
        "max_cycles": 2,
        "llm": {"preset": "local", "max_tokens": 32},
    }
    config = load_config(TINY, overrides)
    trainer = build_trainer(config)
    trainer.optimizer.update = "append"
    stats = trainer.train()[0]
    assert stats["num_episodes"] == 1 and stats["failed_episodes"] == 0
    for role in ("actor", "critic", "optimizer"):
        assert stats["usage_by_role"][role]["calls"] > 0
    # 4 pistons x 2 cycles, each an actor call (the ball may reach the wall sooner).
    trajectory = trainer.trajectories.load(0)[0]
    cycles = trajectory.metadata["cycles"]
    assert 1 <= cycles <= 2
    assert stats["usage_by_role"]["actor"]["calls"] >= 4 * cycles
    assert trajectory.agent_ids == ["piston_0", "piston_1", "piston_2", "piston_3"]
    assert {s.agent_id for s in trajectory.steps} == set(trajectory.agent_ids)
    assert 0 <= trajectory.metadata["parse_failures"] <= 4 * cycles
    evaluation = trainer.store.load_evaluation(trainer.run_id, 0, 0)
    assert set(evaluation["per_agent"]) <= set(trajectory.agent_ids)
    assert isinstance(trainer.env, PistonballEnv)
    if credit == "region":
        assert type(trainer.critic).__name__ == "RegionCredit"
        per_agent = evaluation["per_agent"]  # pistons of one region share its feedback
        assert per_agent.get("piston_0") == per_agent.get("piston_1")
    kept = trainer.checkpoint.get_policies(1)
    assert set(kept) == set(trajectory.agent_ids)
    assert stats["policy_updates"] == dict.fromkeys(trajectory.agent_ids, "append")
    assert trainer.store.run_info(trainer.run_id)["status"] == "completed"
