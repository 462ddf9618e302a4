import torch

from langmarl.magrpo.loss import (
    completion_mask,
    masked_mean,
    policy_gradient_loss,
    token_logprobs,
)

EOS = 2  # SmolLM2: padding and end-of-text share this id


def test_mask_keeps_the_end_of_text_token_when_pad_equals_eos():
    ids = torch.tensor([[5, 6, EOS, EOS, EOS], [7, EOS, EOS, EOS, EOS], [8, 9, 10, 11, 12]])
    mask = completion_mask(ids, [EOS])
    assert mask.tolist() == [
        [1, 1, 1, 0, 0],  # the first EOS is scored, the padding after it is not
        [1, 1, 0, 0, 0],
        [1, 1, 1, 1, 1],  # ran out of budget: every token is real
    ]


def test_mask_with_several_stop_ids():
    mask = completion_mask(torch.tensor([[4, 9, 1, 1]]), [1, 9])
    assert mask.tolist() == [[1, 1, 0, 0]]


def test_token_logprobs_match_log_softmax():
    logits = torch.randn(2, 3, 7)
    targets = torch.randint(0, 7, (2, 3))
    expected = torch.log_softmax(logits, -1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(token_logprobs(logits, targets), expected, atol=1e-6)


def test_padding_does_not_change_the_loss():
    logprobs = torch.tensor([[-1.0, -2.0, -3.0], [-1.0, -1.0, -1.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    advantages = torch.tensor([1.0, -1.0])
    base = policy_gradient_loss(logprobs, advantages, mask)
    junk = logprobs.clone()
    junk[0, 2], junk[1, 1:] = -100.0, -100.0
    assert torch.equal(base, policy_gradient_loss(junk, advantages, mask))
    # token mean: -(1*(-1-2) + -1*(-1)) / 3 tokens
    assert abs(base.item() - (3.0 - 1.0) / 3) < 1e-6


def test_sequence_reduction_averages_per_completion():
    logprobs = torch.tensor([[-2.0, -4.0], [-1.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    loss = policy_gradient_loss(logprobs, torch.tensor([1.0, 1.0]), mask, reduction="sequence")
    assert loss.item() == (3.0 + 1.0) / 2


def test_micro_batches_with_a_shared_normalizer_sum_to_the_full_loss():
    logprobs = torch.randn(4, 5)
    mask = (torch.rand(4, 5) > 0.3).float()
    advantages = torch.randn(4)
    full = policy_gradient_loss(logprobs, advantages, mask)
    total = mask.sum().item()
    parts = sum(
        policy_gradient_loss(
            logprobs[i : i + 2], advantages[i : i + 2], mask[i : i + 2], normalizer=total
        )
        for i in (0, 2)
    )
    assert torch.allclose(full, parts, atol=1e-6)


def test_gradient_raises_the_logprob_of_positive_advantage():
    logits = torch.zeros(1, 1, 3, requires_grad=True)
    logprobs = token_logprobs(logits, torch.tensor([[1]]))
    policy_gradient_loss(logprobs, torch.tensor([1.0]), torch.ones(1, 1)).backward()
    assert logits.grad[0, 0, 1] < 0  # descending the loss increases the chosen logit


def test_masked_mean_handles_empty_masks():
    assert masked_mean(torch.ones(2, 2), torch.zeros(2, 2)).item() == 0.0
