"""Shapes of the multi-turn rollout tree, as pure functions, and the tree's node record.

At every node each of the N agents samples G completions from that node's prompts. The
completions form joint actions: ``align`` pairs the g-th completion of every agent (G joint
actions per node); ``cross`` takes the Cartesian product (G^N joint actions per node). Every
joint action that does not end the episode spawns a child node for the next turn, whose
prompts come from the external feedback on that branch's history. Joint actions never
combine completions of different nodes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from langmarl.core.errors import ConfigError

JointIndex = tuple[int, ...]
"""One joint action: the generation index of each agent (length N)."""


def joint_indices(num_agents: int, num_generations: int, joint_mode: str) -> list[JointIndex]:
    """The joint actions at one node, as per-agent generation indices.

    Args:
        num_agents: N.
        num_generations: G.
        joint_mode: ``"align"`` (G tuples ``(g, …, g)``) or ``"cross"`` (all G^N tuples,
            in lexicographic order).
    """
    builders = {
        "align": lambda: [(g,) * num_agents for g in range(num_generations)],
        "cross": lambda: list(itertools.product(range(num_generations), repeat=num_agents)),
    }
    if joint_mode not in builders:
        raise ConfigError(f"joint_mode is {joint_mode!r}: use 'align' or 'cross'")
    return builders[joint_mode]()


def joint_actions_per_node(num_agents: int, num_generations: int, joint_mode: str) -> int:
    """G for ``align``, G^N for ``cross``."""
    return num_generations if joint_mode == "align" else num_generations**num_agents


def leaf_count(num_agents: int, num_generations: int, num_turns: int, joint_mode: str) -> int:
    """Leaf joint trajectories of a full tree (no early termination): G^T or G^(N·T)."""
    return joint_actions_per_node(num_agents, num_generations, joint_mode) ** num_turns


def level_sizes(
    num_agents: int, num_generations: int, num_turns: int, joint_mode: str
) -> list[int]:
    """Nodes per turn of a full tree: ``[1, J, J^2, …]`` with J joint actions per node."""
    per_node = joint_actions_per_node(num_agents, num_generations, joint_mode)
    return [per_node**turn for turn in range(num_turns)]


def node_count(num_agents: int, num_generations: int, num_turns: int, joint_mode: str) -> int:
    """Nodes of a full tree (each node samples N·G completions)."""
    return sum(level_sizes(num_agents, num_generations, num_turns, joint_mode))


@dataclass
class TreeNode:
    """One node of a rollout tree: the agents' prompts at a turn and what followed.

    Attributes:
        turn: 0-based turn of this node.
        example: The dataset item the tree was grown from.
        prompts: The prompt text each agent saw (already formatted, before the chat template).
        prompt_history: Per agent, the prompts of earlier turns on this branch (oldest first).
        response_history: Per agent, the completions chosen on this branch in earlier turns.
        completions: ``completions[i][g]``: agent i's g-th completion (N × G).
        rows: ``rows[i][g]``: row of that completion in agent i's generation batch of this turn.
        joint: The joint actions (per-agent generation indices).
        rewards: Immediate reward of each joint action.
        children: Child node of each joint action (None where the episode ended).
        returns: Discounted return of each joint action (filled by ``propagate_returns``).
    """

    turn: int
    example: dict[str, object]
    prompts: list[str]
    prompt_history: list[list[str]]
    response_history: list[list[str]]
    completions: list[list[str]] = field(default_factory=list)
    rows: list[list[int]] = field(default_factory=list)
    joint: list[JointIndex] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    children: list[TreeNode | None] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)

    def joint_completions(self, index: int) -> tuple[str, ...]:
        """The completions (one per agent) of joint action ``index``."""
        return tuple(self.completions[agent][g] for agent, g in enumerate(self.joint[index]))


def iter_nodes(root: TreeNode) -> list[TreeNode]:
    """All nodes of the tree, breadth first."""
    nodes, frontier = [], [root]
    while frontier:
        nodes.extend(frontier)
        frontier = [child for node in frontier for child in node.children if child is not None]
    return nodes


def count_leaves(root: TreeNode) -> int:
    """Joint trajectories of an expanded tree: joint actions without a child."""
    return sum(child is None for node in iter_nodes(root) for child in node.children)
