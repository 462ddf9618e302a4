"""Text environments drive MAGRPO: the bridges of langmarl.magrpo.text_envs in a real
training step (tiny random models, so completions are noise: rewards are the env's verdicts
on noise, which is what is checked)."""

import pytest

from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.text_envs import (
    tictactoe_reward,
    tictactoe_transition,
    verifier_feedback,
    verifier_reward,
)
from langmarl.magrpo.trainer import MAGRPOTrainer
from langmarl.verifiers import ExactMatchVerifier


def _trainer(tiny_models, tmp_path, reward, transition, data, num_agents=2):
    models, tokenizers = tiny_models
    config = MAGRPOConfig(
        output_dir=str(tmp_path / "run"),
        num_agents=num_agents,
        num_generations=2,
        num_turns=2,
        max_new_tokens=3,
        max_steps=1,
        use_chat_template=False,
    )
    return MAGRPOTrainer(
        models[:num_agents],
        reward,
        config,
        tokenizers=tokenizers[:num_agents],
        train_dataset=data,
        external_transition=transition,
    )


@pytest.mark.parametrize("num_agents", [1, 2])
def test_tictactoe_reward_and_transition_in_a_two_turn_step(tiny_models, tmp_path, num_agents):
    rewards_seen: list[float] = []
    base = tictactoe_reward(agent=0)

    def reward(samples):
        rewards = base(samples)
        rewards_seen.extend(rewards)
        return rewards

    data = [{"prompt": "You play X. Reply '<Action> n' with n in 1-9."}]
    trainer = _trainer(
        tiny_models, tmp_path, reward, tictactoe_transition(agent=0), data, num_agents
    )
    metrics = trainer.training_step(data)
    assert metrics["leaves"] == 2**2 and len(rewards_seen) == 2 + 4
    # noise is an illegal move: reward 0 (never an exception out of the env)
    assert all(0.0 <= r <= 1.0 for r in rewards_seen)
    assert all(f"agent-{i}/loss" in metrics for i in range(num_agents))


def test_verifier_reward_and_feedback_in_a_two_turn_step(tiny_models, tmp_path):
    data = [{"prompt": "Say ok.", "final_answer": "ok"}]
    prompts_seen: list[list[str]] = []
    looked_up: list[str] = []

    def reference(prompt: str) -> str | None:
        looked_up.append(prompt)
        return {"Say ok.": "ok"}.get(prompt)

    feedback = verifier_feedback(ExactMatchVerifier(), reference)

    def transition(prompt, completions, num_agents, prompt_history=None, response_history=None):
        prompts = feedback(prompt, completions, num_agents, prompt_history, response_history)
        prompts_seen.append(prompts)
        return prompts

    trainer = _trainer(
        tiny_models, tmp_path, verifier_reward(ExactMatchVerifier()), transition, data
    )
    metrics = trainer.training_step(data)
    assert metrics["leaves"] == 4 and len(prompts_seen) == 2
    assert looked_up == ["Say ok.", "Say ok."]  # the task prompt finds its reference
    for prompts in prompts_seen:
        assert len(prompts) == 2 and prompts[0] == prompts[1]
        assert prompts[0].startswith("Say ok.") and "A checker found it" in prompts[0]
