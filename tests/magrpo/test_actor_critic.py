"""IAC and MAAC on a tiny random model, plus the TD math."""

import pytest
import torch

from langmarl.magrpo.actor_critic import IACTrainer, MAACTrainer, critic_inputs, td_advantages
from langmarl.magrpo.config import ActorCriticConfig
from langmarl.magrpo.feedback import make_external
from langmarl.magrpo.tree import TreeNode

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def reward(samples):
    return [float(sum(map(ord, "".join(s.completions))) % 13) for s in samples]


def test_td_advantages_bootstrap_from_the_next_turn():
    leaf = TreeNode(1, {}, ["p"], [[]], [[]], joint=[(0,)], rewards=[2.0], children=[None])
    root = TreeNode(0, {}, ["p"], [[]], [[]], joint=[(0,)], rewards=[1.0], children=[leaf])
    targets, advantages = td_advantages([root, leaf], [[0.5], [3.0]], discount=0.5)
    assert targets == [[1.0 + 0.5 * 3.0], [2.0]]
    assert advantages == [[2.5 - 0.5], [2.0 - 3.0]]


def test_critic_inputs_v_reads_prompts_q_adds_completions():
    node = TreeNode(0, {}, ["p0", "p1"], [[], []], [[], []], completions=[["a"], ["b"]])
    node.joint = [(0, 0)]
    assert critic_inputs(node, [1], "v") == ["p1"]
    assert critic_inputs(node, [0, 1], "q") == ["p0\n\na\n\np1\n\nb"]


def _trainer(cls, tiny_models, tmp_path, **overrides):
    models, tokenizers = tiny_models
    settings = {
        "output_dir": str(tmp_path / "run"),
        "num_turns": 2,
        "max_new_tokens": 4,
        "max_steps": 1,
        "use_chat_template": False,
    }
    settings.update(overrides)
    return cls(
        models,
        reward,
        ActorCriticConfig(**settings),
        tokenizers=tokenizers,
        train_dataset=DATA,
        external_transition=make_external("plain"),
    )


@pytest.mark.parametrize("critic_type", ["v", "q"])
def test_iac_shared_critic_step(tiny_models, tmp_path, critic_type):
    trainer = _trainer(IACTrainer, tiny_models, tmp_path, critic_type=critic_type)
    head_before = trainer.critics[0].head.weight.detach().clone()
    metrics = trainer.training_step(DATA[:1])
    assert metrics["nodes"] == 2 and metrics["leaves"] == 1  # one trajectory, two turns
    assert set(metrics) >= {"critic-0/value_loss", "critic-1/value_loss", "agent-0/loss"}
    assert torch.isfinite(torch.tensor(metrics["critic-0/value_loss"]))
    assert not torch.equal(head_before, trainer.critics[0].head.weight)


def test_iac_separate_critics_and_checkpoint(tiny_models, tmp_path):
    trainer = _trainer(IACTrainer, tiny_models, tmp_path, use_separate_critic=True)
    assert trainer.critics[0].backbone is not trainer.agents[0].model
    trainer.train()
    assert (tmp_path / "run/checkpoints/step-000001/extra.pt").is_file()


def test_maac_has_one_centralized_critic(tiny_models, tmp_path):
    trainer = _trainer(MAACTrainer, tiny_models, tmp_path, critic_type="q")
    assert len(trainer.critics) == 1
    metrics = trainer.training_step(DATA[:1])
    assert "critic-0/value_loss" in metrics and "critic-1/value_loss" not in metrics


@pytest.mark.parametrize("save_optimizer", [False, True])
def test_a_critics_moments_are_saved_only_with_save_optimizer(
    tiny_models, tmp_path, save_optimizer
):
    """``save_optimizer`` decides for the critics as for the agents: without it a MAAC
    checkpoint holds the critic's backbone and head but not its AdamW moments (twice the
    backbone), and a resumed critic restarts its optimizer."""
    trainer = _trainer(MAACTrainer, tiny_models, tmp_path, save_optimizer=save_optimizer)
    trainer.train()
    extra = torch.load(tmp_path / "run/checkpoints/step-000001/extra.pt", weights_only=False)
    [critic] = extra["critics"]
    assert {"head", "backbone"} <= set(critic) and ("optimizer" in critic) is save_optimizer
    resumed = _trainer(
        MAACTrainer, tiny_models, tmp_path, save_optimizer=save_optimizer, max_steps=2
    )
    assert [m["step"] for m in resumed.train("latest")] == [2]
    steps = {int(state["step"]) for state in resumed.critics[0].optimizer.state.values()}
    assert steps == ({2} if save_optimizer else {1})
