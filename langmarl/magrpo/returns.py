"""Returns over a rollout tree, propagated from the leaves to the root (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

from langmarl.magrpo.tree import JointIndex, TreeNode


def discounted_returns(
    rewards: Sequence[float], child_values: Sequence[float | None], discount: float
) -> list[float]:
    """Return of each joint action: its reward plus the discounted value of its child.

    Args:
        rewards: Immediate reward per joint action, length J.
        child_values: Value (mean return) of the child node of each joint action, or None
            where the branch ended; length J.
        discount: γ in [0, 1].

    Returns:
        ``r_j + γ · v_child(j)`` (just ``r_j`` for ended branches), length J.
    """
    if len(rewards) != len(child_values):
        raise ValueError(f"{len(rewards)} rewards but {len(child_values)} child values")
    return [
        float(r) if v is None else float(r) + discount * float(v)
        for r, v in zip(rewards, child_values, strict=True)
    ]


def node_value(returns: Sequence[float]) -> float:
    """Value of a node: the mean return of its joint actions."""
    if not returns:
        raise ValueError("a node needs at least one joint action to have a value")
    return sum(returns) / len(returns)


def propagate_returns(node: TreeNode, discount: float) -> float:
    """Fill ``node.returns`` for the whole subtree (post-order) and return the node's value."""
    child_values = [
        None if child is None else propagate_returns(child, discount) for child in node.children
    ]
    node.returns = discounted_returns(node.rewards, child_values, discount)
    return node_value(node.returns)


def generation_returns(
    returns: Sequence[float], joint: Sequence[JointIndex], num_agents: int, num_generations: int
) -> list[list[float]]:
    """Credit of each agent's completion: the mean return of the joint actions it took part in.

    In ``align`` mode every completion is in exactly one joint action; in ``cross`` mode in
    G^(N-1) of them.

    Returns:
        ``values[i][g]`` for agent i's g-th completion (N × G).

    Raises:
        ValueError: if a completion took part in no joint action.
    """
    sums = [[0.0] * num_generations for _ in range(num_agents)]
    counts = [[0] * num_generations for _ in range(num_agents)]
    for value, index in zip(returns, joint, strict=True):
        for agent, g in enumerate(index):
            sums[agent][g] += value
            counts[agent][g] += 1
    if any(c == 0 for row in counts for c in row):
        raise ValueError("every completion must take part in at least one joint action")
    return [
        [s / c for s, c in zip(srow, crow, strict=True)]
        for srow, crow in zip(sums, counts, strict=True)
    ]


def td_targets(
    rewards: Sequence[float], next_values: Sequence[float], dones: Sequence[bool], discount: float
) -> list[float]:
    """TD(0) targets ``r_t + γ · V(s_{t+1}) · (1 - done_t)`` along one trajectory."""
    return [
        float(r) + (0.0 if done else discount * float(v))
        for r, v, done in zip(rewards, next_values, dones, strict=True)
    ]
