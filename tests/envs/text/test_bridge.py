"""TextEnvAdapter: text envs as BaseEnvironments, trained by MonteCarloTrainer."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from langmarl.config import BaseConfig, TicTacToeConfig, load_config
from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import ConfigError, LLMError
from langmarl.datasets import StaticDataset
from langmarl.envs import SingleStepEnv, TextEnvAdapter, make_env
from langmarl.envs.text.prompts import TICTACTOE_SYSTEM_PROMPT
from langmarl.llm.types import ChatRequest, message_text
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import MonteCarloTrainer
from langmarl.verifiers import ExactMatchVerifier


def _moves(*replies: str) -> object:
    cycle = itertools.cycle(replies)
    return lambda request: next(cycle)


async def test_collects_a_tictactoe_game_as_a_trajectory() -> None:
    adapter = TextEnvAdapter.tictactoe()
    moves = _moves("<Action> 5", "<Action> 1", "<Action> 3", "<Action> 7", "<Action> 9")
    adapter.set_llm(ScriptedLLM(moves))
    trajectory = await adapter.acollect_trajectory({"player": "play well"}, {"seed": 1})
    assert trajectory.agent_ids == ["player"] and trajectory.steps
    assert trajectory.reward in (0.0, 0.5, 1.0) and trajectory.metadata["env"] == "tictactoe"
    assert trajectory.steps[-1].reward == trajectory.reward
    json.dumps(trajectory.to_dict())  # JSON-ready, including step info
    requests = adapter.llm.backend.requests  # type: ignore[union-attr]
    assert message_text(requests[0].messages[0]) == "play well"
    assert "<Action>" in message_text(requests[0].messages[-1])


async def test_garbage_answers_are_truncated_not_fatal() -> None:
    adapter = TextEnvAdapter.tictactoe(max_steps=None, max_turns=4)
    adapter.set_llm(ScriptedLLM(_moves("I don't know")))
    trajectory = await adapter.acollect_trajectory(adapter.default_policies(), {})
    assert len(trajectory.steps) == 4 and trajectory.metadata["truncated"]
    assert trajectory.reward == 0.0
    assert all(step.info["state"]["last_move_illegal"] for step in trajectory.steps)


async def test_actor_failure_ends_the_episode_with_the_error() -> None:
    adapter = TextEnvAdapter.tictactoe()
    failing = [LLMError("local", "m", "down")]
    adapter.set_llm(ScriptedLLM(failing, config=scripted_config(max_retries=0)))
    trajectory = await adapter.acollect_trajectory(adapter.default_policies(), {})
    assert trajectory.steps == [] and "down" in trajectory.metadata["error"]


async def test_single_step_env_through_the_adapter() -> None:
    data = [{"question": "Capital of France?", "final_answer": "Paris"}]
    adapter = TextEnvAdapter(lambda task: SingleStepEnv(StaticDataset(data), ExactMatchVerifier()))
    adapter.set_llm(ScriptedLLM(["paris"]))
    trajectory = await adapter.acollect_trajectory({"player": "answer"}, {"seed": 0})
    assert trajectory.reward == 1.0 and len(trajectory.steps) == 1
    assert trajectory.steps[0].info["verification_result"]["status"] == "success"


def test_standalone_reset_and_step() -> None:
    adapter = TextEnvAdapter.tictactoe()
    with pytest.raises(ConfigError, match="reset"):
        adapter.step("player", "<Action> 5")
    first = adapter.reset({})
    assert "<Action>" in first["player"]
    _, reward, done, info = adapter.step("player", "<Action> 5")
    assert reward == 0.5 and not done and isinstance(info["state"]["board"], list)


def test_registry_builds_env_or_adapter() -> None:
    env = make_env("tictactoe", play_style="random", seed=3)
    assert type(env).__name__ == "TicTacToeEnv"
    adapter = make_env("tictactoe", BaseConfig(env="tictactoe"))
    assert isinstance(adapter, BaseEnvironment) and adapter.agent_ids == ["player"]
    assert adapter.default_policies() == {"player": TICTACTOE_SYSTEM_PROMPT}
    single = make_env("single_step", dataset=[{"question": "q", "final_answer": "a"}])
    assert isinstance(single, SingleStepEnv)
    with pytest.raises(ConfigError, match="dataset="):
        make_env("single_step")
    data = [{"question": "q", "final_answer": "a"}]
    assert isinstance(make_env("single_step", BaseConfig(), dataset=data), BaseEnvironment)


def test_a_tictactoe_config_file_builds_its_adapter(tmp_path: Path) -> None:
    path = tmp_path / "ttt.json"
    path.write_text(json.dumps({"env": "tictactoe", "play_style": "random", "max_steps": 5}))
    config = load_config(path)
    assert isinstance(config, TicTacToeConfig) and config.num_agents == 1
    adapter = make_env(config.env, config)
    game = adapter.env_factory({"seed": 2})
    assert game.opponent.play_style == "random" and game.max_steps == 5
    with pytest.raises(ConfigError, match="play_style"):
        load_config(path, {"play_style": "perfect"})


def _role_reply(request: ChatRequest) -> str:
    system = message_text(request.messages[0]) if request.messages else ""
    if "critic" in system:
        return '{"player": "Block the opponent\'s lines."}'
    if "rewrite the instructions" in system:
        return "You play Tic Tac Toe as X. Always block two O's in a row. Answer '<Action> n'."
    if "improve the instructions" in system or "merge improvement advice" in system:
        return "Block the opponent's winning lines."
    return "<Action> 5"


def test_monte_carlo_trainer_optimizes_a_tictactoe_prompt(tmp_path: Path) -> None:
    config = BaseConfig(
        env="tictactoe",
        exp_name="ttt",
        num_iterations=1,
        trajectories_per_iteration=2,
        runs_dir=str(tmp_path / "runs"),
        seed=1,
    )
    llm = ScriptedLLM(_role_reply, config=scripted_config(max_retries=0))
    adapter = TextEnvAdapter.tictactoe(max_turns=6)
    adapter.set_llm(llm)
    critic = CentralizedCritic(config, llm=llm)
    optimizer = PolicyGradientOptimizer(scripted_config(), llm=llm)
    trainer = MonteCarloTrainer(config, adapter, critic, optimizer, callbacks=[])
    stats = trainer.train()[0]
    assert stats["num_episodes"] == 2
    policies = trainer.checkpoint.get_policies()
    assert list(policies) == ["player"] and "block two O's" in policies["player"]
    assert policies["player"] != TICTACTOE_SYSTEM_PROMPT
