"""A transition defined outside langmarl, named in a run file as
``tests.magrpo.named_transition:shout_back`` (tests/magrpo/test_named_transition.py)."""

from __future__ import annotations

from collections.abc import Sequence

from langmarl.core.transitions import Branch, transition_from

MARK = "NAMED-TRANSITION"
CALLS: list[int] = []
"""The number of agents of each call, so an in-process test sees it was used."""
NOT_A_FUNCTION = 42


def _next_prompts(branch: Branch) -> Sequence[str]:
    CALLS.append(branch.num_agents)
    return [f"{MARK}: {branch.prompt} (you said {c[:20]!r})" for c in branch.completions]


shout_back = transition_from(_next_prompts)
