"""Tree-structured multi-turn rollouts: generation batched per turn, rewards batched per turn.

All nodes of one turn are expanded together: each agent runs one ``generate`` call over the
prompts of every node of that turn (G samples each), the reward function is called once on
every joint action of the turn, and the external feedback builds each child's prompts from
its own branch's history.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langmarl.core.base import StepAware
from langmarl.core.errors import ConfigError
from langmarl.core.transitions import Branch as Branch
from langmarl.core.transitions import ExternalTransition as ExternalTransition
from langmarl.core.transitions import transition_from as transition_from
from langmarl.magrpo.config import TrainerConfig
from langmarl.magrpo.generation import GenerationBatch, generate
from langmarl.magrpo.menu import choose, menu_of
from langmarl.magrpo.parallel import per_agent
from langmarl.magrpo.policy import Agent
from langmarl.magrpo.tree import TreeNode, joint_indices


@dataclass(frozen=True)
class JointSample:
    """What the reward function scores: one joint action in context.

    Attributes:
        example: The dataset item (``prompt`` plus task fields such as ``tests``).
        turn: 0-based turn of the joint action.
        completions: One completion per agent.
        prompts: The prompt each agent saw at this turn.
        response_history: Per agent, that agent's completions of earlier turns on this branch.
    """

    example: Mapping[str, Any]
    turn: int
    completions: tuple[str, ...]
    prompts: tuple[str, ...]
    response_history: tuple[tuple[str, ...], ...]


class JointRewardFunction(Protocol):
    """``reward_func(samples) -> rewards``: one float per joint sample, same order."""

    def __call__(self, samples: Sequence[JointSample]) -> Sequence[float]: ...


StepAwareReward = StepAware
"""A reward told the training step (:class:`~langmarl.core.base.StepAware`):
``WeightSpaceTrainer`` calls ``set_step(step)`` on its reward functions before each training
step, with ``step`` the number of steps already finished (0 before the first)."""


def score(reward_func: JointRewardFunction, samples: Sequence[JointSample]) -> list[float]:
    """Call the reward function and check its answer.

    Raises:
        ConfigError: if it returns the wrong number of values or a non-number.
    """
    rewards = reward_func(samples)
    try:
        values = [float(r) for r in rewards]
    except (TypeError, ValueError):
        raise ConfigError(
            f"reward_func returned {str(rewards)[:80]!r}: it must return one float per "
            f"JointSample ({len(samples)} here)"
        ) from None
    if len(values) != len(samples):
        raise ConfigError(
            f"reward_func returned {len(values)} values for {len(samples)} joint samples: "
            "return exactly one float per JointSample, in the order given"
        )
    if any(math.isnan(v) for v in values):
        raise ConfigError("reward_func returned NaN: return a finite float for every sample")
    return values


@dataclass
class TurnLevel:
    """The nodes of one turn (across all trees) and each agent's generation batch for them."""

    turn: int
    nodes: list[TreeNode]
    batches: list[GenerationBatch]


def roots_for(examples: Sequence[Mapping[str, Any]], agents: Sequence[Agent]) -> list[TreeNode]:
    """One root node per example, prompts from each agent's formatter."""
    return [
        TreeNode(
            turn=0,
            example=dict(example),
            prompts=[agent.formatter(example) for agent in agents],
            prompt_history=[[] for _ in agents],
            response_history=[[] for _ in agents],
        )
        for example in examples
    ]


def grow_trees(
    agents: Sequence[Agent],
    examples: Sequence[Mapping[str, Any]],
    reward_func: JointRewardFunction,
    config: TrainerConfig,
    *,
    num_generations: int,
    joint_mode: str = "align",
    transition: ExternalTransition | None = None,
    termination_threshold: float | None = None,
    greedy: bool = False,
    on_level: Callable[[TurnLevel], None] | None = None,
) -> tuple[list[TreeNode], list[TurnLevel]]:
    """Expand one rollout tree per example, turn by turn.

    Args:
        on_level: Called with each turn's level once its rewards and its nodes' children
            (with their next-turn prompts) exist, before the next turn is generated: an
            online update there changes the weights that sample the next turn.

    Returns:
        The roots and, per turn, the level's nodes and generation batches.

    Raises:
        ConfigError: if more than one turn is asked for without an external transition.
    """
    if config.num_turns > 1 and transition is None:
        raise ConfigError(
            f"num_turns is {config.num_turns} but no external_transition was given: pass "
            "external_transition=make_external('plain') (or your own callable)"
        )
    roots = roots_for(examples, agents)
    frontier, levels = roots, []
    for turn in range(config.num_turns):
        if not frontier:  # every branch terminated early
            break
        batches = _generate_level(agents, frontier, num_generations, config, greedy)
        _fill_nodes(frontier, batches, num_generations, joint_mode)
        _reward_level(frontier, reward_func)
        levels.append(TurnLevel(turn, frontier, batches))
        last = turn == config.num_turns - 1
        frontier = _expand(frontier, agents, config, transition, termination_threshold, last)
        if on_level is not None:
            on_level(levels[-1])
    return roots, levels


def _generate_level(
    agents: Sequence[Agent],
    nodes: list[TreeNode],
    num_generations: int,
    config: TrainerConfig,
    greedy: bool,
) -> list[GenerationBatch]:
    """Each agent's completions for its prompts at ``nodes``, agents in parallel when the
    config says so (:mod:`~langmarl.magrpo.parallel`).

    Each agent samples from its own generator, seeded in order from torch's global random
    state, so the texts do not depend on which agent's thread runs first, and from the model
    its sampler gives (greedy decoding: the trained model). An agent whose formatter offers
    a menu chooses among its options (:mod:`~langmarl.magrpo.menu`).
    """
    import torch

    seeds = torch.randint(0, 2**62, (len(agents),)).tolist()
    if all(agent.worker is not None for agent in agents):  # placement="ray": all at once
        if any(menu_of(agent.formatter) for agent in agents):
            raise ConfigError(
                "an agent that chooses from a menu (the reference game's speaker='rank') "
                "samples in this process: use placement 'process'"
            )
        prompts = [[node.prompts[i] for node in nodes] for i in range(len(agents))]
        pending = [
            agent.worker.generate(prompts[i], num_generations, greedy, int(seeds[i]))
            for i, agent in enumerate(agents)
        ]
        return [p.result() for p in pending]

    def sample(i: int) -> GenerationBatch:
        agent = agents[i]
        model = agent.model if greedy else agent.sampler.model_for(agent.model)
        generator = torch.Generator(device=agent.device).manual_seed(int(seeds[i]))
        prompts = [node.prompts[i] for node in nodes]
        options = menu_of(agent.formatter)
        if options is not None:
            menus = [list(options(node.example)) for node in nodes]
            return choose(model, agent.tokenizer, prompts, menus, num_generations, config,
                          greedy=greedy, generator=generator)  # fmt: skip
        return generate(model, agent.tokenizer, prompts, num_generations, config,
                        greedy=greedy, generator=generator)  # fmt: skip

    return per_agent(sample, len(agents), config.parallel_agents)


def _fill_nodes(
    nodes: list[TreeNode], batches: list[GenerationBatch], generations: int, joint_mode: str
) -> None:
    for k, node in enumerate(nodes):
        rows = list(range(k * generations, (k + 1) * generations))
        node.rows = [rows for _ in batches]
        node.completions = [[batch.texts[r] for r in rows] for batch in batches]
        node.joint = joint_indices(len(batches), generations, joint_mode)


def _reward_level(nodes: list[TreeNode], reward_func: JointRewardFunction) -> None:
    samples = [
        JointSample(
            example=node.example,
            turn=node.turn,
            completions=node.joint_completions(j),
            prompts=tuple(node.prompts),
            response_history=tuple(tuple(h) for h in node.response_history),
        )
        for node in nodes
        for j in range(len(node.joint))
    ]
    rewards = score(reward_func, samples)
    offset = 0
    for node in nodes:
        node.rewards = rewards[offset : offset + len(node.joint)]
        offset += len(node.joint)


def _expand(
    nodes: list[TreeNode],
    agents: Sequence[Agent],
    config: TrainerConfig,
    transition: ExternalTransition | None,
    threshold: float | None,
    last: bool,
) -> list[TreeNode]:
    children: list[TreeNode] = []
    for node in nodes:
        stop = last or transition is None or _terminates(node.rewards, threshold)
        node.children = []
        for j in range(len(node.joint)):
            child = (
                None if stop or transition is None else _child(node, j, agents, config, transition)
            )
            node.children.append(child)
            if child is not None:
                children.append(child)
    return children


def _terminates(rewards: Sequence[float], threshold: float | None) -> bool:
    """Early termination: the mean immediate reward of a node beats the threshold."""
    return threshold is not None and sum(rewards) / len(rewards) > threshold


def _child(
    node: TreeNode,
    j: int,
    agents: Sequence[Agent],
    config: TrainerConfig,
    transition: ExternalTransition,
) -> TreeNode:
    completions = node.joint_completions(j)
    prompt_history = [[*h, p] for h, p in zip(node.prompt_history, node.prompts, strict=True)]
    response_history = [[*h, c] for h, c in zip(node.response_history, completions, strict=True)]
    prompts = list(
        transition(
            str(node.example.get("prompt", "")),
            completions,
            len(agents),
            prompt_history,
            response_history,
        )
    )
    if len(prompts) != len(agents):
        raise ConfigError(
            f"external_transition returned {len(prompts)} prompts for {len(agents)} agents: "
            "return one prompt per agent"
        )
    if not config.external_prompt_passthrough:
        prompts = [
            agent.formatter({**node.example, "prompt": p})
            for agent, p in zip(agents, prompts, strict=True)
        ]
    return TreeNode(
        turn=node.turn + 1,
        example=node.example,
        prompts=prompts,
        prompt_history=prompt_history,
        response_history=response_history,
    )
