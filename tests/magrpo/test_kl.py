import torch

from langmarl.magrpo.kl import kl_k3


def test_zero_when_policies_agree():
    logprobs = torch.log(torch.tensor([[0.2, 0.5]]))
    assert torch.allclose(kl_k3(logprobs, logprobs), torch.zeros(1, 2))


def test_non_negative_and_unbiased_on_samples():
    torch.manual_seed(0)
    p = torch.tensor([0.7, 0.2, 0.1])
    q = torch.tensor([0.4, 0.4, 0.2])
    samples = torch.multinomial(p, 200_000, replacement=True)
    estimate = kl_k3(torch.log(p[samples]), torch.log(q[samples]))
    assert (estimate >= -1e-7).all()
    true_kl = (p * (p / q).log()).sum()
    assert abs(estimate.mean() - true_kl) < 0.01
