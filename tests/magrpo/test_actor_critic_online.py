"""IAC/MAAC with ``update_every="turn"``: one update per turn, before the next turn is sampled
(``langmarl/magrpo/actor_critic.py``); the TD math of one turn; the episode path unchanged."""

from __future__ import annotations

import pydantic
import pytest
import torch

from langmarl.magrpo import rollout
from langmarl.magrpo.actor_critic import (
    IACTrainer,
    MAACTrainer,
    bootstrapped_targets,
    combine_turn_metrics,
    state_input,
)
from langmarl.magrpo.config import ActorCriticConfig, LoRAConfig
from langmarl.magrpo.feedback import make_external
from langmarl.magrpo.tree import TreeNode

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def reward(samples):
    """Never 0 and different per turn, so neither a zero-initialised critic nor the
    normalization over an episode's turns leaves a zero advantage."""
    return [1.0 + s.turn for s in samples]


def _trainer(cls, tiny_models, tmp_path, **overrides):
    models, tokenizers = tiny_models
    settings = {
        "output_dir": str(tmp_path / "run"),
        "num_turns": 2,
        "max_new_tokens": 4,
        "max_steps": 1,
        "use_chat_template": False,
        "sampling_precision": "fp32",  # turns are sampled from the trained model itself
        "parallel_agents": False,
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


def _flat(model) -> torch.Tensor:
    return torch.cat([p.detach().reshape(-1).clone() for p in model.parameters()])


def _record_generating_weights(monkeypatch) -> dict[int, list[torch.Tensor]]:
    """Per model (by id), the weights it held at each of its ``generate`` calls (each turn)."""
    seen: dict[int, list[torch.Tensor]] = {}
    original = rollout.generate

    def recording(model, *args, **kwargs):
        seen.setdefault(id(model), []).append(_flat(model))
        return original(model, *args, **kwargs)

    monkeypatch.setattr(rollout, "generate", recording)
    return seen


def _count_steps(optimizers) -> list[int]:
    counts = [0] * len(optimizers)
    for index, optimizer in enumerate(optimizers):

        def count(*_args, index=index):
            counts[index] += 1

        optimizer.register_step_post_hook(count)
    return counts


def test_bootstrapped_targets_bootstrap_only_where_the_episode_goes_on():
    going_on = TreeNode(0, {}, ["p"], [[]], [[]], joint=[(0,)], rewards=[1.0])
    ended = TreeNode(1, {}, ["p"], [[]], [[]], joint=[(0,)], rewards=[2.0])
    targets, advantages = bootstrapped_targets(
        [going_on, ended], [[0.5], [3.0]], [[4.0], [0.0]], discount=0.5
    )
    assert targets == [[1.0 + 0.5 * 4.0], [2.0]]
    assert advantages == [[3.0 - 0.5], [2.0 - 3.0]]


def test_state_input_is_the_v_critic_text_of_the_prompts():
    node = TreeNode(1, {}, ["p0", "p1"], [[], []], [[], []])
    assert state_input(node, [0, 1]) == "p0\n\np1"
    assert state_input(node, [1]) == "p1"


def test_turn_metrics_average_losses_and_count_skips():
    per_turn = [
        {"critic-0/value_loss": 2.0, "agent-0/loss": 1.0, "agent-0/skipped_nonfinite": 1.0},
        {"critic-0/value_loss": 4.0, "agent-0/loss": 3.0, "agent-0/skipped_nonfinite": 1.0},
    ]
    assert combine_turn_metrics(per_turn) == {
        "critic-0/value_loss": 3.0,
        "agent-0/loss": 2.0,
        "agent-0/skipped_nonfinite": 2.0,
    }


def test_online_updates_refuse_a_q_critic():
    assert ActorCriticConfig().update_every == "episode"
    with pytest.raises(pydantic.ValidationError, match=r"critic_type='v'.*update_every='episode'"):
        ActorCriticConfig(update_every="turn", critic_type="q")


@pytest.mark.parametrize("cls", [IACTrainer, MAACTrainer])
@pytest.mark.parametrize("update_every", ["turn", "episode"])
def test_updates_per_step_and_weights_that_sample_turn_two(
    tiny_models, tmp_path, monkeypatch, cls, update_every
):
    trainer = _trainer(cls, tiny_models, tmp_path, update_every=update_every)
    before = [_flat(agent.model) for agent in trainer.agents]
    actor_steps = _count_steps([agent.optimizer for agent in trainer.agents])
    critic_steps = _count_steps([critic.optimizer for critic in trainer.critics])
    seen = _record_generating_weights(monkeypatch)

    metrics = trainer.training_step(DATA[:1])

    updates = 2 if update_every == "turn" else 1
    assert actor_steps == [updates, updates]
    assert critic_steps == [updates] * len(trainer.critics)
    assert metrics["updates"] == updates and metrics["nodes"] == 2
    assert torch.isfinite(torch.tensor(metrics["critic-0/value_loss"]))
    for agent, initial in zip(trainer.agents, before, strict=True):
        turn0, turn1 = seen[id(agent.model)]
        assert torch.equal(turn0, initial)
        # online: turn 2 is sampled by the weights turn 1's update produced
        assert torch.equal(turn1, initial) == (update_every == "episode")
        assert not torch.equal(_flat(agent.model), initial)


@pytest.mark.parametrize("update_every", ["turn", "episode"])
def test_batches_of_several_examples(tiny_models, tmp_path, update_every):
    trainer = _trainer(IACTrainer, tiny_models, tmp_path, update_every=update_every)
    metrics = trainer.training_step(DATA)  # regression: rows of later examples, not index g
    assert metrics["nodes"] == 4 and metrics["leaves"] == 2
    assert torch.isfinite(torch.tensor(metrics["agent-1/loss"]))


def _adam_steps(optimizer) -> set[int]:
    return {int(state["step"]) for state in optimizer.state.values()}


def test_online_run_resumes_with_its_optimizer_states(tiny_models, tmp_path):
    settings = {"update_every": "turn", "save_optimizer": True}
    trainer = _trainer(MAACTrainer, tiny_models, tmp_path, **settings)
    trainer.train()
    assert _adam_steps(trainer.critics[0].optimizer) == {2}  # one critic step per turn
    assert _adam_steps(trainer.agents[0].optimizer) == {2}

    resumed = _trainer(MAACTrainer, tiny_models, tmp_path, max_steps=2, **settings)
    history = resumed.train("latest")
    assert [m["step"] for m in history] == [2] and history[0]["updates"] == 2
    # the moments went on from the checkpoint's 2 steps instead of restarting
    assert _adam_steps(resumed.critics[0].optimizer) == {4}
    assert _adam_steps(resumed.agents[0].optimizer) == {4}


@pytest.mark.slow
def test_online_iac_on_smollm2_changes_the_weights_between_turns(tmp_path, monkeypatch):
    """The real path (embedded SmolLM2-135M, LoRA, auto sampling precision): the model that
    samples turn 2 holds adapters that turn 1's update moved."""
    from langmarl.magrpo.tasks import get_task

    task = get_task("writing", num_train=1, num_eval=1)
    config = ActorCriticConfig(
        output_dir=str(tmp_path / "iac"),
        num_turns=2,
        max_new_tokens=4,
        max_prompt_tokens=96,
        max_steps=1,
        num_threads=1,
        learning_rate=1e-3,
        lora=LoRAConfig(r=4, alpha=8),
        update_every="turn",
    )
    trainer = IACTrainer(
        ["smollm2", "smollm2"],
        lambda samples: [1.0 + len(s.completions[0]) % 3 for s in samples],
        config,
        formatters=task.formatters,
        train_dataset=task.train_dataset,
        external_transition=make_external("plain"),
    )
    adapters: dict[int, list[torch.Tensor]] = {}
    original = rollout.generate

    def recording(model, *args, **kwargs):
        lora = [p.detach().reshape(-1) for n, p in model.named_parameters() if "lora_" in n]
        adapters.setdefault(id(model), []).append(torch.cat(lora).clone())
        return original(model, *args, **kwargs)

    monkeypatch.setattr(rollout, "generate", recording)
    history = trainer.train()
    assert history[0]["updates"] == 2
    assert len(adapters) == 2  # one sampling model per agent, each used at both turns
    for turn0, turn1 in adapters.values():
        assert not torch.equal(turn0, turn1)
