"""The contract of a between-turn transition: the next turn's prompts of one rollout branch.

It lives in core because several sides use it: MAGRPO's rollouts call transitions
(:mod:`langmarl.magrpo.rollout`, which re-exports these names), its text-environment bridge
builds them (:mod:`langmarl.magrpo.text_envs`), and anyone may write one without loading
torch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


class ExternalTransition(Protocol):
    """Builds the next turn's prompts (one per agent) for one rollout branch.

    The call takes CoMLRL's five arguments, so its external transitions work unchanged:
    ``prompt`` is the example's prompt, ``agent_completions`` this turn's completion per agent,
    ``num_agents`` their number, and the histories, per agent, the prompts seen and the
    completions given on this branch so far, this turn's included (``None`` when the caller
    keeps none). It returns ``num_agents`` prompts. Write new transitions as a function of
    one :class:`Branch` and wrap it with :func:`transition_from` instead of repeating this
    signature.
    """

    def __call__(
        self,
        prompt: str,
        agent_completions: Sequence[str],
        num_agents: int,
        prompt_history_per_agent: list[list[str]] | None = None,
        response_history_per_agent: list[list[str]] | None = None,
    ) -> Sequence[str]: ...


@dataclass(frozen=True)
class Branch:
    """What an external transition sees of one rollout branch after a turn.

    Attributes:
        prompt: The example's prompt.
        completions: This turn's completion, per agent.
        num_agents: How many prompts to return.
        prompt_history: Per agent, the prompts seen on this branch, this turn's included
            (empty when the caller kept none).
        response_history: Per agent, the completions given on this branch, this turn's
            included (this turn's alone when the caller kept none).
    """

    prompt: str
    completions: tuple[str, ...]
    num_agents: int
    prompt_history: tuple[tuple[str, ...], ...]
    response_history: tuple[tuple[str, ...], ...]


def transition_from(next_prompts: Callable[[Branch], Sequence[str]]) -> ExternalTransition:
    """An :class:`ExternalTransition` calling ``next_prompts`` with the branch as one record."""

    def transition(
        prompt: str,
        agent_completions: Sequence[str],
        num_agents: int,
        prompt_history_per_agent: list[list[str]] | None = None,
        response_history_per_agent: list[list[str]] | None = None,
    ) -> list[str]:
        completions = tuple(str(c) for c in agent_completions)
        prompts = prompt_history_per_agent or [[] for _ in completions]
        responses = response_history_per_agent or [[c] for c in completions]
        branch = Branch(
            prompt,
            completions,
            num_agents,
            tuple(tuple(h) for h in prompts),
            tuple(tuple(h) for h in responses),
        )
        return list(next_prompts(branch))

    return transition
