"""The critics of IAC and MAAC: a value head on a causal LM's decoder, where it lives.

A critic is used in four moves per update, the same in process and on Ray::

    values = critic.score(texts)          # floats; the graph kept where the critic lives
    next   = critic.estimate(next_texts)  # floats, no gradients (online TD bootstrap)
    loss   = critic.fit(targets, ...)     # value loss on the scored values, backward
    ...the actors' policy-gradient updates...
    critic.step()                         # the critic's optimizer

In process that is :class:`Critic`. With ``placement="ray"`` it is :class:`RemoteCritic`: the
same :class:`Critic` inside an agent's actor (IAC: each agent's own; MAAC: the centralized
one in agent-0's actor, built from a copy of its model as in process), called through that
actor. Only texts, floats and (for checkpoints) state dicts cross. An actor runs its calls
in the order they were sent, so a value loss that backpropagates into the agent's own model
(IAC's shared value head) lands before that agent's policy update, as in process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


class Critic:
    """A value head on a causal LM's decoder (last token's hidden state → one number)."""

    def __init__(self, backbone: Any, tokenizer: Any, learning_rate: float, owns_backbone: bool):
        import torch

        self.backbone, self.tokenizer, self.owns_backbone = backbone, tokenizer, owns_backbone
        hidden = int(backbone.config.hidden_size)
        device = next(backbone.parameters()).device
        self.head = torch.nn.Linear(hidden, 1).to(device)
        torch.nn.init.zeros_(self.head.weight)
        torch.nn.init.zeros_(self.head.bias)
        params = list(self.head.parameters())
        if owns_backbone:
            params += [p for p in backbone.parameters() if p.requires_grad]
        # one fused kernel on the CPU, as the agents' optimizers (policy.py): a critic with its
        # own SmolLM2-135M backbone steps in 0.07 s instead of 0.29 s (one thread, measured)
        self.optimizer = torch.optim.AdamW(params, lr=learning_rate, fused=device.type == "cpu")
        self._scored: torch.Tensor | None = None

    def values(self, texts: Sequence[str], max_length: int) -> torch.Tensor:
        """``(len(texts),)`` values, with gradients."""
        self.tokenizer.padding_side, self.tokenizer.truncation_side = "left", "left"
        encoded = self.tokenizer(
            list(texts), return_tensors="pt", padding=True, truncation=True, max_length=max_length
        )
        device = self.head.weight.device
        mask = encoded["attention_mask"].to(device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        decoder = _decoder(self.backbone)
        hidden = decoder(
            input_ids=encoded["input_ids"].to(device), attention_mask=mask, position_ids=positions
        ).last_hidden_state
        return self.head(hidden[:, -1, :].float()).squeeze(-1)

    def score(self, texts: Sequence[str], max_length: int) -> list[float]:
        """The values of ``texts``, kept with their graph for the next :meth:`fit`."""
        self._scored = self.values(texts, max_length)
        return [float(v) for v in self._scored.detach()]

    def estimate(self, texts: Sequence[str], max_length: int) -> list[float]:
        """The values of ``texts`` without gradients (a TD target's bootstrap)."""
        import torch

        with torch.no_grad():
            return [float(v) for v in self.values(texts, max_length)]

    def fit(self, targets: Sequence[float], value_loss_coef: float, clip: float | None) -> float:
        """Backpropagate the mean squared error of the last :meth:`score` to ``targets``
        (error clipped to ``clip``), weighted by ``value_loss_coef`` when the head sits on an
        actor's model (1 for a critic with its own backbone); return the loss."""
        import torch

        if self._scored is None:
            raise RuntimeError("Critic.fit before Critic.score: score the batch first")
        scored, self._scored = self._scored, None
        error = scored - torch.tensor(list(targets), device=scored.device)
        if clip is not None:
            error = error.clamp(-clip, clip)
        value_loss = (error**2).mean()
        weight = 1.0 if self.owns_backbone else value_loss_coef
        (weight * value_loss).backward()
        return float(value_loss.detach())

    def step(self) -> None:
        """Step the critic's optimizer and clear its gradients."""
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def state_dict(self, optimizer: bool = True) -> dict[str, Any]:
        """The head, the backbone when the critic owns one, and the optimizer's moments when
        ``optimizer`` (``save_optimizer``: for a critic with its own SmolLM2-135M backbone,
        AdamW's moments are 1 GB of the checkpoint)."""
        state = {"head": self.head.state_dict()}
        if optimizer:
            state["optimizer"] = self.optimizer.state_dict()
        if self.owns_backbone:
            state["backbone"] = self.backbone.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict`; saved without the optimizer, the optimizer restarts
        (as an agent's does)."""
        self.head.load_state_dict(state["head"])
        if self.owns_backbone and "backbone" in state:
            self.backbone.load_state_dict(state["backbone"])
        if "optimizer" in state:
            self.optimizer.load_state_dict(state["optimizer"])


def _decoder(model: Any) -> Any:
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return base.get_decoder()


class RemoteCritic:
    """A :class:`Critic` in an agent's Ray actor, called as one in process is.

    Args:
        handle: The actor's :class:`~langmarl.magrpo.placement.AgentHandle`.
        number: The critic's index among that actor's critics.
        owns_backbone: Whether the critic has its own copy of the model.
    """

    def __init__(self, handle: Any, number: int, owns_backbone: bool) -> None:
        self.handle, self.number, self.owns_backbone = handle, number, owns_backbone

    def _ask(self, method: str, *args: Any) -> Any:
        return self.handle.critic(method, self.number, *args).result()

    def score(self, texts: Sequence[str], max_length: int) -> list[float]:
        return list(self._ask("critic_score", list(texts), max_length))

    def estimate(self, texts: Sequence[str], max_length: int) -> list[float]:
        return list(self._ask("critic_estimate", list(texts), max_length))

    def fit(self, targets: Sequence[float], value_loss_coef: float, clip: float | None) -> float:
        return float(self._ask("critic_fit", list(targets), value_loss_coef, clip))

    def step(self) -> None:
        self._ask("critic_step")

    def state_dict(self, optimizer: bool = True) -> dict[str, Any]:
        return dict(self._ask("critic_state", optimizer))

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._ask("critic_load", state)


def on_cpu(value: Any) -> Any:
    """``value`` (tensors, and dicts/lists of them: a state dict) with every tensor on the
    CPU, so it pickles without the device it came from."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {key: on_cpu(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(on_cpu(item) for item in value)
    return value
