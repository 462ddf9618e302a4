"""The real path: one MonteCarloTrainer iteration on TicTacToe with the embedded model."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmarl.config import BaseConfig
from langmarl.envs import TextEnvAdapter
from langmarl.envs.text.prompts import TICTACTOE_SYSTEM_PROMPT
from langmarl.llm import LLMClient
from langmarl.llm.tracker import UsageLedger
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import MonteCarloTrainer


@pytest.mark.slow
def test_one_iteration_optimizes_a_tictactoe_prompt_with_the_embedded_model(tmp_path: Path) -> None:
    config = BaseConfig(
        env="tictactoe",
        exp_name="ttt-embedded",
        num_iterations=1,
        trajectories_per_iteration=1,
        runs_dir=str(tmp_path / "runs"),
        llm={"preset": "local", "max_tokens": 32},
        validate_updates=False,  # this test counts the bridge's own calls, not validation's
        seed=0,
    )
    ledger = UsageLedger()
    adapter = TextEnvAdapter.tictactoe(max_steps=2, max_turns=2, max_tokens=12)
    adapter.set_llm(LLMClient(config.get_actor_llm(), role="actor", ledger=ledger))
    critic = CentralizedCritic(config, ledger=ledger)
    # append instead of an LLM rewrite: one optimizer call less on a shared 2-core machine
    optimizer = PolicyGradientOptimizer(config.get_optimizer_llm(), ledger=ledger, update="append")
    trainer = MonteCarloTrainer(config, adapter, critic, optimizer, callbacks=[], ledger=ledger)

    stats = trainer.train()[0]

    assert stats["num_episodes"] == 1
    assert 0.0 <= stats["avg_reward"] <= 1.0
    assert stats["usage_by_role"]["actor"]["calls"] == 2
    assert stats["usage_by_role"]["critic"]["calls"] >= 1
    policies = trainer.checkpoint.get_policies()
    assert stats["policy_updates"] == {"player": "append"}
    assert list(policies) == ["player"]
    assert policies["player"].startswith(TICTACTOE_SYSTEM_PROMPT)
    assert len(policies["player"]) > len(TICTACTOE_SYSTEM_PROMPT)  # the gradient was applied
    (episode,) = trainer.trajectories.load(0)
    assert len(episode.steps) == 2 and all(step.agent_id == "player" for step in episode.steps)
