"""Plots of run directories written by the real trainers (scripted LLMs, tiny random models).

The numbers plotted are checked against what the trainer itself returned, so a change of
a writer's format shows up here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_plot_render import png_size

from langmarl.llm.types import ChatRequest
from langmarl.plots import plot_run, run_series
from langmarl.testing import ScriptedLLM, scripted_config


def _parl_reply(request: ChatRequest) -> str:
    user = str(request.messages[-1]["content"])
    if "Write the plan now" in user:
        return "SUBTASK: What is 1 + 1?\nSUBTASK: What is 2 + 2?"
    if user.startswith("Question:"):
        return "ANSWER: 2" if "1 + 1" in user else "ANSWER: 4"
    if "helpers answered" in user:
        return "2\n4"
    return "Split every numbered part into its own SUBTASK line."


@pytest.mark.slow
def test_language_space_parl_run_of_the_monte_carlo_trainer(tmp_path: Path) -> None:
    from langmarl.envs.parallel.env import make_parallel_tasks
    from langmarl.parl.config import ParallelTasksConfig
    from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
    from langmarl.trainer import MonteCarloTrainer

    config = ParallelTasksConfig(
        exp_name="parl", runs_dir=str(tmp_path), num_iterations=2,
        trajectories_per_iteration=2, seed=1,
    )  # fmt: skip
    llm = ScriptedLLM(_parl_reply, config=scripted_config(max_retries=0))
    env = make_parallel_tasks(config, llm=llm)
    trainer = MonteCarloTrainer(
        config, env, CentralizedCritic(config, llm=llm),
        PolicyGradientOptimizer(scripted_config(), llm=llm),
        callbacks=env.training_callbacks(),
    )  # fmt: skip
    metrics = trainer.train()

    run = tmp_path / "parl"
    plot = run_series(run)
    assert plot.kind == "language" and plot.label == "language space (completed)"
    reward = plot.series("Reward per iteration")["mean reward"]
    assert reward.x == [1, 2] and reward.y == [m["avg_reward"] for m in metrics]
    accepted = plot.series("Prompt updates")["accepted"].y
    assert accepted == [m["accepted_updates"] for m in metrics]
    steps = plot.series("Critical vs serial steps")
    assert all(
        c < s for c, s in zip(steps["critical steps"].y, steps["serial steps"].y, strict=True)
    )
    assert png_size(plot_run(run, tmp_path / "language.png"))[0] == 1280


def _tiny_llama() -> tuple[Any, Any]:
    import torch
    import transformers

    from langmarl.magrpo.policy import embedded_model_dir

    tokenizer = transformers.AutoTokenizer.from_pretrained(embedded_model_dir())
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config), tokenizer


@pytest.mark.slow
def test_weight_space_run_of_the_magrpo_trainer(tmp_path: Path) -> None:
    from langmarl.magrpo.config import MAGRPOConfig
    from langmarl.magrpo.trainer import MAGRPOTrainer

    def reward(samples: Any) -> list[float]:
        return [float(len(s.completions[0]) - len(s.completions[1])) / 10 for s in samples]

    (model_a, tokenizer), (model_b, _) = _tiny_llama(), _tiny_llama()
    config = MAGRPOConfig(
        output_dir=str(tmp_path), num_generations=2, max_new_tokens=4, max_steps=3,
        num_train_epochs=3, beta=0.1, eval_interval=2, use_chat_template=False, num_threads=1,
    )  # fmt: skip
    data = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]
    trainer = MAGRPOTrainer(
        [model_a, model_b], reward, config, tokenizers=[tokenizer, tokenizer],
        train_dataset=data, eval_dataset=data,
    )  # fmt: skip
    history = trainer.train()

    plot = run_series(tmp_path)
    assert plot.kind == "weight" and plot.label == "weight space (MAGRPO)"
    rewards = plot.series("Reward per step")
    assert rewards["reward"].x == [1, 2, 3]
    assert rewards["reward"].y == pytest.approx([m["reward_mean"] for m in history])
    assert rewards["eval return"].x == [2]
    assert plot.series("KL to the reference")["agent-1"].y == pytest.approx(
        [m["agent-1/kl"] for m in history]
    )
    lengths = plot.series("Completion length")
    assert set(lengths) == {"agent-0", "agent-1"} and all(0 < y <= 4 for y in lengths["agent-0"].y)
    assert png_size(plot_run(tmp_path)) == (1280, 740)


@pytest.mark.slow
def test_parl_orchestrator_grpo_run(tmp_path: Path) -> None:
    from langmarl.envs.parallel.env import ParallelTasksEnv
    from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig

    model, tokenizer = _tiny_llama()
    subagents = ScriptedLLM(["ANSWER: 3"], config=scripted_config(max_retries=0))
    env = ParallelTasksEnv(num_tasks=2, subagent_llm=subagents, max_subagent_steps=1)
    config = OrchestratorGRPOConfig(
        num_steps=2, num_generations=2, max_new_tokens=8, output_dir=str(tmp_path), num_threads=1
    )
    metrics = OrchestratorGRPO(env, config, model=model, tokenizer=tokenizer).train()

    plot = run_series(tmp_path)
    assert plot.kind == "parl"
    reward = plot.series("PARL reward per step")
    assert reward["total reward"].x == [1, 2]
    assert reward["total reward"].y == pytest.approx([m["total_reward"] for m in metrics])
    steps = plot.series("Critical vs serial steps")
    assert steps["critical steps"].y == pytest.approx([m["critical_steps"] for m in metrics])
    assert png_size(plot_run(tmp_path)) == (1280, 740)


PENDULUM_REWARD = '''
def reward_fn(obs, action, next_obs, info):
    """Keep the pole upright.
    LaTeX: r = 1 - |\\\\theta|
    Terms:
        upright: one minus the pole angle
    """
    up = 1.0 - abs(float(next_obs[1]))
    return up, {"upright": up}
'''


def _p2p_reply(request: ChatRequest) -> str:
    system = str(request.messages[0]["content"])
    if "SCORE" in system:
        return "SCORE: 0.4"
    return f"```python\n{PENDULUM_REWARD.strip()}\n```"


@pytest.mark.slow
def test_reward_space_session_with_real_ppo_runs(tmp_path: Path) -> None:
    """One iteration of real PPO: the writer's format; a session of several iterations is
    test_plot_kinds.py's (written by hand in the same format)."""
    from langmarl.p2p.reward.validation import ValidationResult, check_static
    from langmarl.p2p.session.loop import LoopConfig, run_loop

    def validator(source: str, env_id: str) -> ValidationResult:  # the sandbox is tested in p2p
        result = check_static(source)
        result.terms, result.latex = {"upright": "up"}, "r"
        return result

    train = {
        "num_steps": 256, "batch_size": 64, "n_epochs": 1, "num_evals": 2, "eval_episodes": 2,
        "max_episode_steps": 100, "record_video": False,
    }  # fmt: skip
    config = LoopConfig(
        env_id="InvertedPendulum-v5", max_iterations=1, elaborate=False, review=False,
        code_judge=False, total_timesteps=512, train=train, max_parallel=1,
    )  # fmt: skip
    llm = ScriptedLLM(_p2p_reply, config=scripted_config(max_retries=0))
    result = run_loop("balance", config, llm=llm, runs_dir=tmp_path, validator=validator)
    assert result.status == "max_iterations", result.error

    session = tmp_path / result.session_id
    plot = run_series(session)
    assert plot.kind == "reward"
    judge = plot.series("Judge score per iteration")["intent score"]
    assert judge.x == [1] and judge.y == [s.intent_score for s in result.iterations]
    returns = plot.series("Return per iteration's training")
    assert returns["iter 1 eval return"].x == [256, 512]
    assert plot.notes == ["only one iteration so far: drawn as single points, no curve yet"]
    assert png_size(plot_run(session)) == (640, 757)  # two panels (740) and the note's line

    run = run_series(session / "iter_1")
    assert run.kind == "reward-run" and set(run.series("Reward terms")) == {"upright"}
    assert run.series("Return per environment step")["eval return"].x == [256, 512]
