"""MAGRPO: multi-agent group-relative policy optimization over multi-turn rollout trees.

Each step grows one rollout tree per example (see :mod:`langmarl.magrpo.rollout`), propagates
discounted returns from the leaves to the root, gives every agent's completion at every node
a group-relative advantage, and takes one policy-gradient step per agent.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langmarl.magrpo.advantages import group_advantages
from langmarl.magrpo.base import WeightSpaceTrainer, tree_metrics
from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.parallel import per_agent
from langmarl.magrpo.returns import generation_returns
from langmarl.magrpo.rollout import TurnLevel
from langmarl.magrpo.tree import TreeNode
from langmarl.magrpo.update import (
    PolicyBatch,
    UpdateStats,
    accumulate_policy_gradients,
    apply_gradients,
)

if TYPE_CHECKING:
    import torch


def level_advantages(
    nodes: Sequence[TreeNode], agent: int, num_agents: int, config: MAGRPOConfig
) -> torch.Tensor:
    """Advantages of agent ``agent``'s completions at one turn, in generation-batch row order.

    Each node's G completions form one group; a completion's value is the mean return of the
    joint actions it took part in.

    Returns:
        ``(len(nodes) * G,)`` advantages.
    """
    import torch

    values = torch.tensor(
        [
            generation_returns(node.returns, node.joint, num_agents, config.num_generations)[agent]
            for node in nodes
        ],
        dtype=torch.float32,
    )
    advantages = group_advantages(values, config.advantage_mode, config.normalize_advantage)
    return advantages.reshape(-1)


class MAGRPOTrainer(WeightSpaceTrainer):
    """Train N causal-LM agents with MAGRPO (``num_agents=1`` is GRPO).

    Example:
        >>> trainer = MAGRPOTrainer(["smollm2", "smollm2"], reward_func, MAGRPOConfig(),
        ...                         train_dataset=[{"prompt": "Write about the sea."}])
        >>> trainer.train()
    """

    algorithm = "magrpo"
    ray_placement = True
    args: MAGRPOConfig

    def __init__(
        self, agents: Sequence[Any], reward_func: Any, args: MAGRPOConfig | None = None, **kw: Any
    ) -> None:
        super().__init__(agents, reward_func, args or MAGRPOConfig(), **kw)

    def rollout(self, examples: list[dict[str, Any]]) -> tuple[list[TreeNode], list[TurnLevel]]:
        """Grow and score the rollout trees of ``examples`` (returns filled in)."""
        args = self.args
        return self.grow(examples, args.num_generations, joint_mode=args.joint_mode,
                         termination_threshold=args.termination_threshold)  # fmt: skip

    def training_step(self, examples: list[dict[str, Any]]) -> dict[str, float]:
        """One MAGRPO step on a batch of examples."""
        started = time.perf_counter()
        roots, levels = self.rollout(examples)
        metrics = tree_metrics(roots, levels)
        metrics["rollout_seconds"] = time.perf_counter() - started

        def parts_of(index: int) -> list[PolicyBatch]:
            return [
                PolicyBatch(
                    level.batches[index],
                    level_advantages(level.nodes, index, len(self.agents), self.args),
                    group=self.args.num_generations,
                )
                for level in levels
            ]

        def update(index: int) -> UpdateStats:
            agent = self.agents[index]
            stats = accumulate_policy_gradients(agent, parts_of(index), self.args)
            apply_gradients(agent, self.args, stats)
            return stats

        if all(agent.worker is not None for agent in self.agents):  # placement="ray"
            pending = [agent.worker.update(parts_of(i)) for i, agent in enumerate(self.agents)]
            every = [p.result() for p in pending]  # the agents' actors update at once
        else:
            parallel = self.args.parallel_agents if self.args.parallel_updates else False
            every = per_agent(update, len(self.agents), parallel)
        for agent, stats in zip(self.agents, every, strict=True):
            self.skipped_nonfinite += int(stats.skipped_nonfinite)
            metrics[f"{agent.name}/loss"] = stats.loss
            metrics[f"{agent.name}/completion_tokens"] = stats.tokens / max(stats.sequences, 1)
            metrics[f"{agent.name}/grad_norm"] = stats.grad_norm
            metrics[f"{agent.name}/skipped_nonfinite"] = float(stats.skipped_nonfinite)
            if self.args.beta > 0:
                metrics[f"{agent.name}/kl"] = stats.kl
            if stats.synced_bytes:  # rollout_placement="apart": the weights pushed
                metrics[f"{agent.name}/synced_mb"] = stats.synced_bytes / 1e6
        metrics["update_seconds"] = time.perf_counter() - started - metrics["rollout_seconds"]
        return metrics
