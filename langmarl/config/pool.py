"""`PoolSettings`: language-space search with a pool of candidates and demonstrations."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Search = Literal["gradient", "pool"]
"""How a language-space run improves its policies: ``gradient`` (one incumbent, the
critic's language gradients rewrite it; LangMARL's loop) or ``pool`` (a Pareto pool of
candidates mutated by demonstrations, merges and optionally rewrites; see
:mod:`langmarl.trainer.pool`)."""


class PoolSettings(BaseModel):
    """The ``pool`` search (``search: "pool"``): each iteration is one round.

    A round picks a parent on the pool's Pareto front, plays ``trajectories_per_iteration``
    exploration episodes with it, proposes ``children`` candidates, scores each on the
    validation batch (``validation_size`` tasks) and adds those that score at least as well
    as their parent."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    children: int = Field(default=4, ge=1, le=32)
    """Candidates proposed per round (demonstration updates, one merge when the front has
    two candidates, rewrites with ``rewrites``)."""
    max_demonstrations: int = Field(default=3, ge=1, le=16)
    """Demonstrations per agent at most; an update adds one below it and replaces one at it."""
    samples_per_task: int = Field(default=4, ge=1, le=64)
    """Exploration episodes per task; their answers are recombined for counterfactual
    credit where the environment can score a combination."""
    explore_temperature: float = Field(default=1.0, ge=0.0, le=2.0)
    """Sampling temperature of the exploration episodes (validation and evaluation are
    greedy where the environment supports it)."""
    min_credit: float = Field(default=0.0, ge=0.0)
    """A demonstration must have earned at least this credit for its agent."""
    drop_probability: float = Field(default=0.1, ge=0.0, le=1.0)
    """Chance that a demonstration update drops a demonstration instead of adding one."""
    merge: bool = True
    """Propose one merge of two front candidates per round (per agent, the better parent's
    policy)."""
    rewrites: bool = False
    """Also propose rewrites of the instruction from the critic's language gradients (for
    capable endpoints; on the embedded model they rarely validate)."""
    max_rollouts: int | None = Field(default=None, ge=1)
    """Stop once this many episodes (exploration + validation) were played (``None``: run
    ``num_iterations`` rounds)."""
    demo_char_budget: int = Field(default=6000, ge=100)
    """Characters of demonstrations an actor call may carry; more are cut, oldest first,
    with a warning (never a prompt overflow)."""
