"""Sampling loop and masks with a scripted fake LM whose end-of-text id is also its pad id."""

from types import SimpleNamespace

import torch

from langmarl.llm.local.sampling import Sampling
from langmarl.magrpo.generation import decode
from langmarl.magrpo.loss import completion_mask

EOS = 2  # SmolLM2: padding and end-of-text share this id
VOCAB = 10
SCRIPTS = {0: [5, EOS], 1: [5, 6, 7, EOS]}  # what each prompt's rows emit


class FakeCache:
    def __init__(self, rows):
        self.rows, self.step = list(rows), 0

    def batch_repeat_interleave(self, times):
        self.rows = [r for r in self.rows for _ in range(times)]

    def batch_select_indices(self, indices):
        self.rows = [self.rows[i] for i in indices.tolist()]


class FakeLM:
    """Emits SCRIPTS[prompt] greedily; rows are tracked through the cache."""

    def __call__(
        self,
        input_ids,
        attention_mask,
        position_ids,
        use_cache,
        past_key_values=None,
        logits_to_keep=None,
    ):
        cache = past_key_values or FakeCache(range(input_ids.shape[0]))
        if past_key_values is not None:
            cache.step += 1
        logits = torch.full((len(cache.rows), 1, VOCAB), -10.0)
        for slot, row in enumerate(cache.rows):
            script = SCRIPTS[row % 2]  # the cache starts with one row per prompt
            logits[slot, 0, script[min(cache.step, len(script) - 1)]] = 10.0
        return SimpleNamespace(logits=logits, past_key_values=cache)


def test_decode_keeps_eos_scored_and_pads_after_it_with_the_same_id():
    prompts = torch.tensor([[EOS, 3, 4], [3, 4, 4]])  # first prompt is left-padded with EOS
    mask = torch.tensor([[0, 1, 1], [1, 1, 1]])
    result = decode(
        FakeLM(),
        prompts,
        mask,
        2,
        max_new_tokens=6,
        stop_ids=[EOS],
        sampling=Sampling(greedy=True),
        pad_id=EOS,
    )
    assert result.shape == (4, 4)  # stops once every row ended, not at max_new_tokens
    assert result[0].tolist() == [5, EOS, EOS, EOS]
    assert result[2].tolist() == [5, 6, 7, EOS]
    assert completion_mask(result, [EOS]).tolist() == [[1, 1, 0, 0]] * 2 + [[1, 1, 1, 1]] * 2


def test_shared_prompt_logprobs_equal_the_plain_forward(tiny_models):
    from langmarl.magrpo.generation import completion_logprobs, shared_prompt_logprobs

    model = tiny_models[0][0]
    torch.manual_seed(1)
    prompts = torch.randint(3, 100, (2, 5))
    prompts[0, :2] = EOS  # left padding on the first prompt
    prompt_mask = torch.ones(2, 5, dtype=torch.long)
    prompt_mask[0, :2] = 0
    completions = torch.randint(3, 100, (6, 4))
    completions[0, 2:] = EOS  # ended early: pad == end-of-text
    sequences = torch.cat([prompts.repeat_interleave(3, dim=0), completions], dim=1)
    mask = torch.cat(
        [prompt_mask.repeat_interleave(3, dim=0), completion_mask(completions, [EOS]).long()], dim=1
    )
    plain = completion_logprobs(model, sequences, mask, 5)
    shared = shared_prompt_logprobs(model, sequences, mask, 5, group=3)
    scored = completion_mask(completions, [EOS]).bool()
    assert torch.allclose(plain[scored], shared[scored], atol=1e-5)
    grads = []
    for values in (plain, shared):
        model.zero_grad()
        (values * scored).sum().backward(retain_graph=True)
        grads.append(model.lm_head.weight.grad.clone())
    assert torch.allclose(grads[0], grads[1], atol=1e-4)
