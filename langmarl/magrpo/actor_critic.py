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
from typing import Any

from langmarl.magrpo.advantages import normalize_batch
from langmarl.magrpo.base import WeightSpaceTrainer, tree_metrics
from langmarl.magrpo.config import ActorCriticConfig
from langmarl.magrpo.critic import Critic, RemoteCritic
from langmarl.magrpo.rollout import TurnLevel
from langmarl.magrpo.tree import TreeNode, iter_nodes
from langmarl.magrpo.update import (
    PolicyBatch,
    UpdateStats,
    accumulate_policy_gradients,
    apply_gradients,
)

AnyCritic = Critic | RemoteCritic
"""A critic in this process, or in an agent's Ray actor (``placement="ray"``)."""


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


TDFunction = Callable[[AnyCritic, list[int], list[list[float]]], Targets]
"""``td(critic, readers, values) -> (targets, advantages)`` for one update's nodes."""


class IACTrainer(WeightSpaceTrainer):
    """Independent actor-critic: each agent learns from its own critic."""

    algorithm = "iac"
    ray_placement = True
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

    def _build_critics(self) -> list[AnyCritic]:
        separate = self.args.use_separate_critic
        return [self._critic_on(index, own_copy=separate) for index in range(len(self.agents))]

    def _critic_on(self, index: int, own_copy: bool) -> AnyCritic:
        """A critic on agent ``index``'s model (on a copy of it with ``own_copy``), built
        where that agent lives: here, or in its Ray actor (``placement="ray"``)."""
        agent, lr = self.agents[index], self.args.critic_learning_rate
        if agent.worker is not None:
            number = agent.worker.critic("add_critic", own_copy, lr).result()
            return RemoteCritic(agent.worker, number, owns_backbone=own_copy)
        backbone = copy.deepcopy(agent.model) if own_copy else agent.model
        return Critic(backbone, agent.tokenizer, lr, owns_backbone=own_copy)

    def _critic_groups(self) -> list[tuple[AnyCritic, list[int]]]:
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

        def td(critic: AnyCritic, readers: list[int], values: list[list[float]]) -> Targets:
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
        max_length = self.args.max_prompt_tokens + self.args.max_new_tokens

        def td(critic: AnyCritic, readers: list[int], values: list[list[float]]) -> Targets:
            children = [c for node in level.nodes for c in node.children if c is not None]
            following: dict[int, float] = {}
            if children:
                texts = [state_input(child, readers) for child in children]
                next_values = critic.estimate(texts, max_length)
                following = {id(c): v for c, v in zip(children, next_values, strict=True)}
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
        args = self.args
        metrics: dict[str, float] = {}
        position = {id(node): n for n, node in enumerate(nodes)}
        max_length = args.max_prompt_tokens + args.max_new_tokens
        agent_advantages: dict[int, list[list[float]]] = {}
        for number, (critic, readers) in enumerate(self._critic_groups()):
            texts = [t for node in nodes for t in critic_inputs(node, readers, args.critic_type)]
            shaped = _reshape(critic.score(texts, max_length), nodes)
            targets, advantages = td(critic, readers, shaped)
            flat_targets = [t for row in targets for t in row]
            value_loss = critic.fit(flat_targets, args.value_loss_coef, args.value_clip)
            metrics[f"critic-{number}/value_loss"] = value_loss
            for reader in readers:
                agent_advantages[reader] = advantages
        every = self._update_actors([
            self._policy_parts(levels, index, agent_advantages[index], position)
            for index in range(len(self.agents))
        ])  # fmt: skip
        for agent, stats in zip(self.agents, every, strict=True):
            self.skipped_nonfinite += int(stats.skipped_nonfinite)
            metrics[f"{agent.name}/loss"] = stats.loss
            metrics[f"{agent.name}/skipped_nonfinite"] = float(stats.skipped_nonfinite)
            if stats.synced_bytes:  # rollout_placement="apart"
                metrics[f"{agent.name}/synced_mb"] = stats.synced_bytes / 1e6
        for critic in self.critics:
            critic.step()
        return metrics

    def _update_actors(self, parts: Sequence[list[PolicyBatch]]) -> list[UpdateStats]:
        """Each agent's policy-gradient step on its parts: one after the other here, or all
        at once in their Ray actors (each after its critic's value loss, sent before)."""
        if all(agent.worker is not None for agent in self.agents):  # placement="ray"
            pending = [a.worker.update(p) for a, p in zip(self.agents, parts, strict=True)]
            return [p.result() for p in pending]
        every = []
        for agent, agent_parts in zip(self.agents, parts, strict=True):
            stats = accumulate_policy_gradients(agent, agent_parts, self.args)
            apply_gradients(agent, self.args, stats)
            every.append(stats)
        return every

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
        optimizer = self.args.save_optimizer  # the critics' moments too, as the agents'
        return {"critics": [critic.state_dict(optimizer) for critic in self.critics]}

    def load_extra_state(self, extra: dict[str, Any]) -> None:
        for critic, state in zip(self.critics, extra.get("critics", []), strict=False):
            critic.load_state_dict(state)


class MAACTrainer(IACTrainer):
    """Multi-agent actor-critic: one centralized critic reads all agents' prompts."""

    algorithm = "maac"
    centralized = True

    def _build_critics(self) -> list[AnyCritic]:
        return [self._critic_on(0, own_copy=True)]  # a copy of agent-0's model, where it lives

    def _critic_groups(self) -> list[tuple[AnyCritic, list[int]]]:
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
