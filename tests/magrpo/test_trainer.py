"""The MAGRPO pipeline end to end on a tiny random model (seconds, no real weights)."""

import logging

import pytest
import torch

from langmarl.core.errors import ConfigError
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.feedback import make_external
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def length_reward(samples):
    return [float(len(s.completions[0]) - len(s.completions[1])) / 10 for s in samples]


def make(tiny_models, tmp_path, reward=length_reward, **overrides):
    models, tokenizers = tiny_models
    settings = {
        "output_dir": str(tmp_path / "run"),
        "num_generations": 2,
        "max_new_tokens": 4,
        "max_steps": 1,
        "use_chat_template": False,
    }
    settings.update(overrides)
    transition = make_external("plain") if settings.get("num_turns", 1) > 1 else None
    return MAGRPOTrainer(
        models,
        reward,
        MAGRPOConfig(**settings),
        tokenizers=tokenizers,
        train_dataset=DATA,
        external_transition=transition,
    )


def test_cross_tree_has_g_to_the_nt_leaves_and_rewards_every_joint_action(tiny_models, tmp_path):
    seen = []

    def reward(samples):
        seen.append([(s.turn, len(s.response_history[0])) for s in samples])
        return length_reward(samples)

    trainer = make(tiny_models, tmp_path, reward, num_turns=2, joint_mode="cross")
    metrics = trainer.training_step(DATA[:1])
    assert metrics["leaves"] == 2 ** (2 * 2)
    assert metrics["nodes"] == 1 + 4
    assert len(seen[0]) == 4 and len(seen[1]) == 16
    assert all(turn == 1 and history == 1 for turn, history in seen[1])


def test_align_tree_and_batch_of_roots(tiny_models, tmp_path):
    trainer = make(tiny_models, tmp_path, num_turns=2, per_device_train_batch_size=2)
    metrics = trainer.training_step(DATA)
    assert metrics["leaves"] == 2 * 2**2
    assert {"agent-0/loss", "agent-1/loss", "reward_turn1", "return_mean"} <= set(metrics)


def test_early_termination_stops_expanding(tiny_models, tmp_path):
    trainer = make(
        tiny_models, tmp_path, lambda s: [1.0] * len(s), num_turns=2, termination_threshold=0.5
    )
    metrics = trainer.training_step(DATA[:1])
    assert metrics["nodes"] == 1 and metrics["leaves"] == 2


def test_reward_of_wrong_shape_names_the_fix(tiny_models, tmp_path):
    trainer = make(tiny_models, tmp_path, lambda samples: [0.0])
    with pytest.raises(ConfigError, match="one float per JointSample"):
        trainer.training_step(DATA[:1])


def test_formatter_count_must_match(tiny_models, tmp_path):
    models, tokenizers = tiny_models
    with pytest.raises(ConfigError, match="one formatter per agent"):
        MAGRPOTrainer(
            models,
            length_reward,
            MAGRPOConfig(output_dir=str(tmp_path)),
            tokenizers=tokenizers,
            formatters=[lambda e: e["prompt"]],
            train_dataset=DATA,
        )


def test_multi_turn_without_transition_is_refused(tiny_models, tmp_path):
    models, tokenizers = tiny_models
    with pytest.raises(ConfigError, match="make_external"):
        MAGRPOTrainer(
            models,
            length_reward,
            MAGRPOConfig(output_dir=str(tmp_path), num_turns=2),
            tokenizers=tokenizers,
            train_dataset=DATA,
        )


def test_nonfinite_loss_is_skipped_with_a_warning_and_counted(tiny_models, tmp_path, caplog):
    trainer = make(tiny_models, tmp_path, lambda s: [float("inf")] * len(s), max_steps=2)
    before = [p.detach().clone() for p in trainer.agents[0].model.parameters()]
    with caplog.at_level(logging.WARNING):
        history = trainer.train()
    assert history[-1]["skipped_nonfinite_total"] == 4  # 2 agents × 2 steps
    assert "non-finite loss" in caplog.text
    after = list(trainer.agents[0].model.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))


def test_training_changes_weights_and_writes_metrics(tiny_models, tmp_path):
    def reward(samples):
        return [float(sum(map(ord, "".join(s.completions))) % 97) for s in samples]

    trainer = make(tiny_models, tmp_path, reward)
    before = trainer.agents[0].model.model.embed_tokens.weight.detach().clone()
    trainer.train()
    assert not torch.equal(before, trainer.agents[0].model.model.embed_tokens.weight)
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 1 and '"step": 1' in lines[0]


def test_checkpoint_resume_continues_from_the_saved_step(tiny_models, tmp_path, smol_tokenizer):
    trainer = make(tiny_models, tmp_path, max_steps=1)
    trainer.train()
    saved = trainer.agents[1].model.lm_head.weight.detach().clone()
    assert (tmp_path / "run/checkpoints/step-000001/agent-1/model.safetensors").is_file()

    models, tokenizers = tiny_models
    fresh = [type(m)(m.config) for m in models]
    resumed = MAGRPOTrainer(
        fresh,
        length_reward,
        MAGRPOConfig(
            output_dir=str(tmp_path / "run"),
            num_generations=2,
            max_new_tokens=4,
            max_steps=2,
            use_chat_template=False,
        ),
        tokenizers=tokenizers,
        train_dataset=DATA,
    )
    resumed.load_checkpoint("latest")
    assert resumed.step == 1
    assert torch.equal(resumed.agents[1].model.lm_head.weight, saved)
    history = resumed.train()
    assert [m["step"] for m in history] == [2]


def test_resume_without_checkpoint_says_what_to_do(tiny_models, tmp_path):
    trainer = make(tiny_models, tmp_path)
    with pytest.raises(ConfigError, match="train without resume_from"):
        trainer.load_checkpoint("latest")


def test_evaluate_is_greedy_and_logged(tiny_models, tmp_path):
    trainer = make(tiny_models, tmp_path, num_turns=2)
    result = trainer.evaluate(num_samples=2)
    assert {"eval_return", "eval_reward_turn0", "eval_reward_turn1"} <= set(result)
    assert (tmp_path / "run" / "eval.jsonl").is_file()


def test_single_agent_is_grpo(tiny_models, tmp_path):
    models, tokenizers = tiny_models
    trainer = MAGRPOTrainer(
        models[:1],
        lambda samples: [float(len(s.completions[0])) for s in samples],
        MAGRPOConfig(
            output_dir=str(tmp_path),
            num_agents=1,
            num_generations=3,
            max_new_tokens=4,
            use_chat_template=False,
        ),
        tokenizers=tokenizers[:1],
        train_dataset=DATA,
    )
    metrics = trainer.training_step(DATA[:1])
    assert metrics["leaves"] == 3 and "agent-0/loss" in metrics and "agent-1/loss" not in metrics
