"""The structured author: rewards a small model can drive (issue 38).

A 135M model cannot write reward code (free-form code never validated in any session seen,
DESIGN.md), but it can rank: its likelihood of "So the robot should *move backwards.*" after
"Intent: make the cheetah run backwards" beats the other objectives' (10 of 12 movement
intents right here, w16 and fp32 alike; demonstrations in the prefix did not help). So the
author asks the model only that: it ranks the env's objectives
(:mod:`~langmarl.p2p.design.catalog`), the code compiles the best one's proposal to reward
code (:mod:`~langmarl.p2p.design.proposals`), and the numbers decide from there: the search
(:mod:`~langmarl.p2p.design.search`) trains the top-ranked objectives, then variants of the
best and the next-ranked, and the check (or the judges) picks the best candidate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langmarl.p2p.design.catalog import Objective, objectives

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

PREFIX = "Intent: {intent}\nSo the robot should"
"""What the objectives' phrases continue (the measured setup: scoring only the part that
differs; scoring "So the robot should …" whole got 4 of 12 right)."""


def rank_objectives(llm: LLMClient, intent: str, env_id: str) -> list[tuple[Objective, float]]:
    """``env_id``'s objectives, most likely first under ``llm`` for ``intent``, each with its
    mean token log-probability (ties keep the catalog's order; a single objective is not
    scored).

    Raises:
        LLMError: if ``llm`` cannot score options (not a local model) or the call failed.
        ConfigError: for an env without a catalog.
    """
    choices = objectives(env_id)
    if len(choices) == 1:
        return [(choices[0], 0.0)]
    prefix = PREFIX.format(intent=" ".join(intent.split()))
    scores = llm.option_logprobs(prefix, [o.phrase for o in choices])
    order = sorted(range(len(choices)), key=lambda i: -scores[i])
    return [(choices[i], scores[i]) for i in order]
