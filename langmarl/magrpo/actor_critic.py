"""IAC and MAAC: actor-critic training of N causal-LM agents with TD(0) targets across turns.

Both reuse MAGRPO's rollout (a chain of turns when ``num_generations == 1``), policy-gradient
update, KL, checkpoints and logging; they differ only in their critics:

- **IAC**: one critic per agent, either a value head on the agent's own model
  (``use_separate_critic=False``; its loss is weighted by ``value_loss_coef``) or a separate
  copy of the model with a value head.
- **MAAC**: one centralized critic that reads every agent's prompt (and completion, for
  ``critic_type="q"``).

``critic_type="v"`` scores a state (the prompt); ``"q"`` a state and action (prompt and
completion). The TD(0) advantage of joint action j at a node is
``r_j + γ·C(child_j) − C_j``, with ``C(child)`` the critic value of the next turn (0 at the end).

When they learn (``update_every``):

- ``"episode"`` (default): the whole episode is rolled out first; one forward pass of each
  critic scores every node, so each turn's target bootstraps from the same critic that scores
  its baseline; then one critic step and one actor step per agent.
- ``"turn"`` (online, needs a v-critic): after each turn's joint action, reward and the next
  turn's prompts (the external transition's answer), that turn alone is one update::

      for t in turns:
          sample turn t from the current actors; score it; build the turn-t+1 prompts
          V_t = critic(turn-t prompts)            # with gradients
          V'  = critic(turn-t+1 prompts)          # the same, pre-update critic, no gradients
          target = r_t + γ·V'   (r_t where the episode ended: the last turn, no bootstrap)
          step critic on (V_t − target)²; step each actor with advantage target − V_t

  Decided edge cases: ``V'`` comes from the critic *before* this turn's step and is a
  constant (semi-gradient TD(0)); at turn t+1 the baseline is recomputed by the updated
  critic, so it need not equal the ``V'`` turn t bootstrapped from. Advantages are normalized
  over the turn's batch only, and a batch of one row per agent (one example per step) is used
  as it is (normalizing one number would zero it). With a value head on the actor the value
  loss also moves the actor's backbone at every turn. A q-critic is refused
  (:class:`ActorCriticConfig`): its target would need the next turn's action, sampled only
  after the update. With one turn both modes do the same update. Metrics: the critic and
  actor losses are means over the step's turns, ``agent-i/skipped_nonfinite`` a count, and
  ``updates`` the number of updates the step made (1 per episode, or the turns played).
  Checkpoints are the same in both modes (the critics' optimizers ride in ``extra.pt``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langmarl.magrpo.advantages import normalize_batch
from langmarl.magrpo.base import WeightSpaceTrainer, tree_metrics
from langmarl.magrpo.config import ActorCriticConfig
from langmarl.magrpo.policy import Agent
from langmarl.magrpo.rollout import TurnLevel
from langmarl.magrpo.tree import TreeNode, iter_nodes
from langmarl.magrpo.update import PolicyBatch, accumulate_policy_gradients, apply_gradients

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
        self.optimizer = torch.optim.AdamW(params, lr=learning_rate)

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

    def state_dict(self) -> dict[str, Any]:
        state = {"head": self.head.state_dict(), "optimizer": self.optimizer.state_dict()}
        if self.owns_backbone:
            state["backbone"] = self.backbone.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.head.load_state_dict(state["head"])
        if self.owns_backbone and "backbone" in state:
            self.backbone.load_state_dict(state["backbone"])
        self.optimizer.load_state_dict(state["optimizer"])


def _decoder(model: Any) -> Any:
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return base.get_decoder()


def critic_inputs(node: TreeNode, agents: Sequence[int], critic_type: str) -> list[str]:
    """Critic text of each joint action at ``node``: the listed agents' prompts (+ completions
    for ``q``), one string per joint action."""
    texts = []
    for j in range(len(node.joint)):
        parts = []
        for i in agents:
            parts.append(node.prompts[i])
            if critic_type == "q":
                parts.append(node.joint_completions(j)[i])
        texts.append("\n\n".join(parts))
    return texts


Targets = tuple[list[list[float]], list[list[float]]]
"""TD targets and advantages, ``[node][joint action]`` each."""


def td_advantages(nodes: Sequence[TreeNode], values: list[list[float]], discount: float) -> Targets:
    """TD(0) targets and advantages per node and joint action.

    Args:
        nodes: Every node of the trees; ``values[n][j]`` is the critic value of joint action j
            at ``nodes[n]`` (for a v-critic the same for all j).
        discount: γ.

    Returns:
        ``(targets, advantages)`` shaped like ``values``.
    """
    index = {id(node): n for n, node in enumerate(nodes)}
    following = []
    for node in nodes:
        node_following = []
        for j in range(len(node.rewards)):
            child = node.children[j] if node.children else None
            value = 0.0
            if child is not None:
                child_values = values[index[id(child)]]
                value = sum(child_values) / len(child_values)
            node_following.append(value)
        following.append(node_following)
    return bootstrapped_targets(nodes, values, following, discount)


def bootstrapped_targets(
    nodes: Sequence[TreeNode],
    values: list[list[float]],
    following: list[list[float]],
    discount: float,
) -> Targets:
    """TD(0) targets ``r + γ·following`` and advantages ``target − value``.

    Args:
        nodes: The nodes whose joint actions are scored (their ``rewards``).
        values: ``values[n][j]``: critic value of joint action j at ``nodes[n]``.
        following: ``following[n][j]``: value of the state joint action j led to (0 where the
            episode ended).
        discount: γ.

    Returns:
        ``(targets, advantages)`` shaped like ``values``.
    """
    targets, advantages = [], []
    for node, node_values, node_following in zip(nodes, values, following, strict=True):
        node_targets = [
            reward + discount * value
            for reward, value in zip(node.rewards, node_following, strict=True)
        ]
        targets.append(node_targets)
        advantages.append([t - v for t, v in zip(node_targets, node_values, strict=True)])
    return targets, advantages


def state_input(node: TreeNode, agents: Sequence[int]) -> str:
    """V-critic text of the state at ``node`` (the listed agents' prompts), known before any
    of its completions (what :func:`critic_inputs` gives each joint action for ``"v"``)."""
    return "\n\n".join(node.prompts[i] for i in agents)


TDFunction = Callable[[Critic, list[int], list[list[float]]], Targets]
"""``td(critic, readers, values) -> (targets, advantages)`` for one update's nodes."""


class IACTrainer(WeightSpaceTrainer):
    """Independent actor-critic: each agent learns from its own critic."""

    algorithm = "iac"
    args: ActorCriticConfig
    centralized = False

    def __init__(
        self,
        agents: Sequence[Any],
        reward_func: Any,
        args: ActorCriticConfig | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(agents, reward_func, args or ActorCriticConfig(), **kw)
        self.critics = self._build_critics()

    def _build_critics(self) -> list[Critic]:
        lr = self.args.critic_learning_rate
        if self.args.use_separate_critic:
            return [
                Critic(copy.deepcopy(a.model), a.tokenizer, lr, owns_backbone=True)
                for a in self.agents
            ]
        return [Critic(a.model, a.tokenizer, lr, owns_backbone=False) for a in self.agents]

    def _critic_groups(self) -> list[tuple[Critic, list[int]]]:
        """Each critic with the agents whose prompts it reads."""
        return [(critic, [i]) for i, critic in enumerate(self.critics)]

    def training_step(self, examples: list[dict[str, Any]]) -> dict[str, float]:
        """Roll out one trajectory per example; update critics and actors once after the
        episode or after every turn (``update_every``, see the module docstring)."""
        steps = {"episode": self._episode_step, "turn": self._turn_step}
        return steps[self.args.update_every](examples)

    def _episode_step(self, examples: list[dict[str, Any]]) -> dict[str, float]:
        """The whole episode, then one update whose targets bootstrap inside the batch."""
        roots, levels = self.grow(examples, self.args.num_generations)
        metrics = tree_metrics(roots, levels)
        nodes = [node for root in roots for node in iter_nodes(root)]

        def td(critic: Critic, readers: list[int], values: list[list[float]]) -> Targets:
            return td_advantages(nodes, values, self.args.discount)

        metrics.update(self._update(levels, nodes, td))
        metrics["updates"] = 1.0
        return metrics

    def _turn_step(self, examples: list[dict[str, Any]]) -> dict[str, float]:
        """One update per turn, each before the next turn is sampled."""
        per_turn: list[dict[str, float]] = []

        def update_turn(level: TurnLevel) -> None:
            per_turn.append(self._update([level], level.nodes, self._online_td(level)))

        roots, levels = self.grow(examples, self.args.num_generations, on_level=update_turn)
        metrics = tree_metrics(roots, levels)
        metrics.update(combine_turn_metrics(per_turn))
        metrics["updates"] = float(len(per_turn))
        return metrics

    def _online_td(self, level: TurnLevel) -> TDFunction:
        """Targets of one turn, bootstrapped from the pre-update critic's value of the next
        turn's prompts (0 where the episode ended)."""
        import torch

        max_length = self.args.max_prompt_tokens + self.args.max_new_tokens

        def td(critic: Critic, readers: list[int], values: list[list[float]]) -> Targets:
            children = [c for node in level.nodes for c in node.children if c is not None]
            following: dict[int, float] = {}
            if children:
                with torch.no_grad():
                    texts = [state_input(child, readers) for child in children]
                    next_values = critic.values(texts, max_length)
                following = {id(c): float(v) for c, v in zip(children, next_values, strict=True)}
            bootstrap = [
                [following[id(c)] if c is not None else 0.0 for c in node.children]
                for node in level.nodes
            ]
            return bootstrapped_targets(level.nodes, values, bootstrap, self.args.discount)

        return td

    def _update(
        self, levels: Sequence[TurnLevel], nodes: Sequence[TreeNode], td: TDFunction
    ) -> dict[str, float]:
        """One step of every critic and actor on the joint actions at ``nodes`` (the nodes of
        ``levels``): value loss towards ``td``'s targets, policy gradient with its advantages."""
        import torch

        args = self.args
        metrics: dict[str, float] = {}
        position = {id(node): n for n, node in enumerate(nodes)}
        max_length = args.max_prompt_tokens + args.max_new_tokens
        agent_advantages: dict[int, list[list[float]]] = {}
        for number, (critic, readers) in enumerate(self._critic_groups()):
            texts = [t for node in nodes for t in critic_inputs(node, readers, args.critic_type)]
            flat = critic.values(texts, max_length)
            shaped = _reshape([float(v) for v in flat.detach()], nodes)
            targets, advantages = td(critic, readers, shaped)
            target = torch.tensor([t for row in targets for t in row], device=flat.device)
            error = flat - target
            if args.value_clip is not None:
                error = error.clamp(-args.value_clip, args.value_clip)
            value_loss = (error**2).mean()
            weight = 1.0 if critic.owns_backbone else args.value_loss_coef
            (weight * value_loss).backward()
            metrics[f"critic-{number}/value_loss"] = float(value_loss.detach())
            for reader in readers:
                agent_advantages[reader] = advantages
        for index, agent in enumerate(self.agents):
            parts = self._policy_parts(levels, index, agent_advantages[index], position)
            stats = accumulate_policy_gradients(agent, parts, args)
            apply_gradients(agent, args, stats)
            self.skipped_nonfinite += int(stats.skipped_nonfinite)
            metrics[f"{agent.name}/loss"] = stats.loss
            metrics[f"{agent.name}/skipped_nonfinite"] = float(stats.skipped_nonfinite)
        for critic in self.critics:
            critic.optimizer.step()
            critic.optimizer.zero_grad(set_to_none=True)
        return metrics

    def _policy_parts(
        self,
        levels: Sequence[Any],
        agent: int,
        advantages: list[list[float]],
        position: dict[int, int],
    ) -> list[PolicyBatch]:
        """Per turn, agent ``agent``'s completions with the TD advantage of their joint action."""
        import torch

        rows = []
        for level in levels:
            values = [  # the g-th completion of a node took part in its joint action g (align)
                advantages[position[id(node)]][g]
                for node in level.nodes
                for g in range(len(node.rows[agent]))
            ]
            rows.append(values)
        flat = torch.tensor([v for row in rows for v in row], dtype=torch.float32)
        if self.args.normalize_advantage and flat.numel() > 1:
            flat = normalize_batch(flat)
        parts, offset = [], 0
        for level, row in zip(levels, rows, strict=True):
            parts.append(PolicyBatch(level.batches[agent], flat[offset : offset + len(row)]))
            offset += len(row)
        return parts

    def extra_state(self) -> dict[str, Any]:
        return {"critics": [critic.state_dict() for critic in self.critics]}

    def load_extra_state(self, extra: dict[str, Any]) -> None:
        for critic, state in zip(self.critics, extra.get("critics", []), strict=False):
            critic.load_state_dict(state)


class MAACTrainer(IACTrainer):
    """Multi-agent actor-critic: one centralized critic reads all agents' prompts."""

    algorithm = "maac"
    centralized = True

    def _build_critics(self) -> list[Critic]:
        first: Agent = self.agents[0]
        backbone = copy.deepcopy(first.model)
        return [Critic(backbone, first.tokenizer, self.args.critic_learning_rate, True)]

    def _critic_groups(self) -> list[tuple[Critic, list[int]]]:
        return [(self.critics[0], list(range(len(self.agents))))]


def combine_turn_metrics(per_turn: Sequence[dict[str, float]]) -> dict[str, float]:
    """One step's metrics from its per-turn updates: each loss the mean over the turns,
    each ``skipped_nonfinite`` the number of turns whose update was skipped."""
    combined: dict[str, float] = {}
    for key in dict.fromkeys(k for turn in per_turn for k in turn):
        values = [turn[key] for turn in per_turn if key in turn]
        total = sum(values)
        combined[key] = total if key.endswith("skipped_nonfinite") else total / len(values)
    return combined


def _reshape(flat: list[float], nodes: Sequence[TreeNode]) -> list[list[float]]:
    shaped, offset = [], 0
    for node in nodes:
        shaped.append(flat[offset : offset + len(node.joint)])
        offset += len(node.joint)
    return shaped
