"""The typed records of a session analysis (:mod:`langmarl.p2p.analysis.analyze`), as written to
``analysis.json``: per-term statistics, plateaus, what changed per iteration, the best
iteration, the runs' training dynamics (:mod:`langmarl.p2p.analysis.dynamics`) and the narrative."""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, Field

from langmarl.p2p.analysis.dynamics import IterationDynamics, Trend
from langmarl.p2p.session.config import LoopConfig
from langmarl.p2p.session.contracts import RewardOrigin


class TermIteration(BaseModel):
    """One reward term in one iteration."""

    iteration: int
    mean: float
    spread: float | None = None
    spread_over: Literal["runs", "checkpoints"] | None = None
    share: float = 0.0
    dominant: bool = False


class TermStats(BaseModel):
    """One reward term across the iterations that have it."""

    name: str
    iterations: list[TermIteration] = Field(default_factory=list)
    mean: float = 0.0
    spread: float | None = None
    slope: float | None = None
    """Change of the term's mean per iteration (None with one iteration)."""
    trend: Trend = "n/a"
    share: float = 0.0
    dominant_in: list[int] = Field(default_factory=list)


class Plateau(BaseModel):
    """A series that stopped moving."""

    series: Literal["intent_score", "mean_return", "eval_return"]
    iteration: int
    """The last iteration of the plateau (``eval_return``: the iteration it is in)."""
    message: str


class IterationChange(BaseModel):
    """One iteration's result and what changed from the previous one."""

    iteration: int
    origin: RewardOrigin
    intent_score: float | None = None
    mean_return: float | None = None
    error: str | None = None
    reward_changed: bool | None = None
    """Whether its reward code differs from the previous iteration's (None for the first)."""
    terms_added: list[str] = Field(default_factory=list)
    terms_removed: list[str] = Field(default_factory=list)
    hp_changes: dict[str, float] = Field(default_factory=dict)
    """The reviser's hyperparameter changes this iteration trained with."""
    score_delta: float | None = None
    return_delta: float | None = None


class BestIteration(BaseModel):
    """The best iteration by intent score (first best wins), and by mean return."""

    iteration: int | None = None
    intent_score: float | None = None
    mean_return: float | None = None
    by_return: int | None = None


class SessionAnalysis(BaseModel):
    """Everything :func:`analysis_steps` found, as written to ``analysis.json``."""

    session_id: str
    status: str | None = None
    analyzed_at: float = Field(default_factory=time.time)
    dominance_threshold: float = LoopConfig.model_fields["dominance_threshold"].default
    origins: dict[str, int] = Field(default_factory=dict)
    """How many iterations trained a reward of each origin (author, fallback, ...)."""
    best: BestIteration = Field(default_factory=BestIteration)
    iterations: list[IterationChange] = Field(default_factory=list)
    terms: list[TermStats] = Field(default_factory=list)
    plateaus: list[Plateau] = Field(default_factory=list)
    dynamics: list[IterationDynamics] = Field(default_factory=list)
    narrative: str = ""
    narrative_source: Literal["llm", "rules", "none"] = "none"
    narrative_note: str = ""
    """Why the LLM's narrative was not used (empty when it was, or none was asked for)."""
    error: str | None = None
    """Why the analysis failed (the session's own status is never changed by it)."""

    def flags(self) -> list[str]:
        """Every flag raised: dominance, plateaus and the runs' dynamics."""
        found = [f"dominant:{t.name}" for t in self.terms if t.dominant_in]
        found += [f"plateau:{p.series}" for p in self.plateaus]
        return found + sorted({f for d in self.dynamics for f in d.flags})
