"""Agents sampled and updated on parallel threads: same results as one after the other."""

import copy
import threading

import pytest
import torch

from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.feedback import make_external
from langmarl.magrpo.parallel import per_agent
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def reward(samples):
    return [float(sum(map(ord, "".join(s.completions))) % 13) for s in samples]


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def train(tiny_models, tmp_path, parallel, parallel_updates=False, update_precision="fp32"):
    models, tokenizers = tiny_models
    config = MAGRPOConfig(
        output_dir=str(tmp_path / f"run-{parallel}"),
        num_generations=2,
        num_turns=2,
        max_new_tokens=6,
        max_steps=2,
        temperature=1.0,
        use_chat_template=False,
        parallel_agents=parallel,
        parallel_updates=parallel_updates,
        update_precision=update_precision,
        num_threads=1,  # not the free cores of the moment: a busy machine would change them
    )
    trainer = MAGRPOTrainer(
        [copy.deepcopy(m) for m in models],
        reward,
        config,
        tokenizers=tokenizers,
        train_dataset=DATA,
        external_transition=make_external("plain"),
    )
    texts = []  # per step, the texts its rollout sampled (the training's own, not extra ones)
    grow = trainer.grow

    def recording(*args, **kwargs):
        roots, levels = grow(*args, **kwargs)
        texts.append([batch.texts for level in levels for batch in level.batches])
        return roots, levels

    trainer.grow = recording
    history = trainer.train()
    assert len(texts) == 2
    return texts, history, [agent.model for agent in trainer.agents]


def test_parallel_agents_give_the_sequential_texts_and_weights(tiny_models, tmp_path, one_thread):
    """Sampled on threads, updated in turn or on threads too: the sequential run's texts,
    losses and weights exactly (one sequential run compared with both)."""
    seq_texts, seq_history, seq_models = train(tiny_models, tmp_path, parallel=False)
    assert any(t for step in seq_texts for batch in step for t in batch)  # something sampled
    for parallel_updates in (False, True):
        par_texts, par_history, par_models = train(
            tiny_models, tmp_path / f"updates-{parallel_updates}", True, parallel_updates
        )
        assert par_texts == seq_texts
        for key in ("agent-0/loss", "agent-1/loss", "reward_mean"):
            assert [h.get(key) for h in par_history] == [h.get(key) for h in seq_history]
        for seq, par in zip(seq_models, par_models, strict=True):
            for a, b in zip(seq.parameters(), par.parameters(), strict=True):
                assert torch.equal(a, b)
        assert torch.get_num_threads() == 1  # restored after the parallel sections
    original = tiny_models[0][0].model.embed_tokens.weight  # training moved the weights
    assert not torch.equal(par_models[0].model.embed_tokens.weight, original)


def test_bf16_updates_on_parallel_threads_agree_with_sequential_ones_to_rounding(
    tiny_models, tmp_path, one_thread
):
    """With ``update_precision="bf16"`` the products run in oneDNN's bf16 kernels, whose
    blocking (so the order of their sums) may follow the threads of the one that runs them:
    the same texts, and losses equal to rounding — the second step's loss is computed with
    the weights the first step's update left, so a wrong update shows there. Weights are not
    compared element by element: AdamW turns a rounding-size change of a near-zero gradient
    into a step of the learning rate's size."""
    seq = train(tiny_models, tmp_path, parallel=False, update_precision="bf16")
    par = train(tiny_models, tmp_path / "par", True, True, update_precision="bf16")
    assert par[0][0] == seq[0][0]  # step 1, sampled before any update (step 2: after one)
    for key in ("agent-0/loss", "agent-1/loss", "reward_mean"):
        expected = [h.get(key) for h in seq[1]]
        assert [h.get(key) for h in par[1]] == pytest.approx(expected, rel=0.02, abs=1e-4)


def test_per_agent_runs_the_agents_at_once():
    barrier = threading.Barrier(2, timeout=10)  # one after the other would wait forever
    names = per_agent(lambda i: (barrier.wait(), threading.current_thread().name)[1], 2, True)
    assert len(set(names)) == 2 and all(n.startswith("agent") for n in names)


def test_per_agent_off_runs_in_order_on_the_calling_thread():
    order: list[int] = []
    assert per_agent(lambda i: order.append(i) or i * 10, 3, False) == [0, 10, 20]
    assert order == [0, 1, 2]


def test_per_agent_raises_an_agents_error_after_the_others_finish():
    finished = threading.Event()

    def work(i):
        if i == 0:
            raise ValueError("agent 0 failed")
        finished.set()
        return i

    before = torch.get_num_threads()
    with pytest.raises(ValueError, match="agent 0 failed"):
        per_agent(work, 2, True)
    assert finished.is_set() and torch.get_num_threads() == before
