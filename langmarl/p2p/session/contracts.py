"""Typed records that cross module boundaries: what training, judging and the loop write.

Every record is a pydantic model stored as JSON in an iteration or session directory (see
:mod:`langmarl.p2p.session.records`), so the API and the dashboard can read runs without this code.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from langmarl.core.intervals import ScoreInterval
from langmarl.llm.tools import ToolUse  # a revision records its tool calls

IterationStatus = Literal["pending", "running", "completed", "error", "cancelled"]
SessionStatus = Literal[
    "pending", "running", "passed", "max_iterations", "invalid_code", "error", "cancelled"
]
RewardOrigin = Literal[
    "user",
    "author",
    "demonstration",
    "structured",
    "variant",
    "random",
    "revision",
    "fallback",
    "previous",
]


class RewardSpec(BaseModel):
    """What a reward claims to compute."""

    latex: str = ""
    terms: dict[str, str] = Field(default_factory=dict)
    description: str = ""
    origin: RewardOrigin = "user"
    """Who wrote it: the user, the LLM author (free-form code; ``demonstration`` when it is a
    close copy of a verified reward shown to it: :mod:`~langmarl.p2p.design.
    demonstrations`), the structured author (a
    proposal over the env's term catalog, compiled), the search (a ``variant`` of the best
    candidate so far, or a ``random`` draw from the catalog: :mod:`~langmarl.p2p.design.
    search`), a revision, the documented fallback template, or the previous iteration's
    reward kept because a revision failed validation."""
    proposal: dict[str, Any] | None = None
    """The proposal it was compiled from (origins ``structured``, ``variant``, ``random``)."""


class EvalCheckpoint(BaseModel):
    """One evaluation checkpoint: returns over ``eval_episodes`` deterministic episodes."""

    step: int
    mean_return: float
    p10_return: float
    median_return: float
    p90_return: float
    mean_env_return: float
    """Return under the env's own reward, for comparison."""
    mean_length: float
    term_means: dict[str, float] = Field(default_factory=dict)
    """Per-step mean of each reward term over the evaluation episodes."""
    videos: dict[str, str] = Field(default_factory=dict)
    """Percentile label (p10/median/p90) -> video file name in ``videos/``."""
    trajectory: str | None = None
    """File name of the saved trajectories (npz) of this checkpoint."""


class TrainSummary(BaseModel):
    """The outcome of one training run."""

    env_id: str
    seed: int
    total_timesteps: int
    steps_done: int
    training_time_s: float
    steps_per_second: float
    final_episodic_return: float
    """Mean evaluation return (custom reward) at the last checkpoint."""
    final_env_return: float
    """Mean evaluation return under the env's own reward at the last checkpoint."""
    term_means: dict[str, float] = Field(default_factory=dict)
    checkpoints: list[EvalCheckpoint] = Field(default_factory=list)


class JudgeScore(BaseModel):
    """One judge's verdict."""

    judge: str
    """"code", "vlm", or "fallback"."""
    score: float | None = None
    """Intent score in [0, 1]; None when this judge could not produce one."""
    reason: str = ""


class JudgmentResult(BaseModel):
    """The synthesised verdict on one iteration."""

    intent_score: float = Field(default=0.0, ge=0, le=1)
    passed: bool = False
    diagnosis: str = ""
    failure_tags: list[str] = Field(default_factory=list)
    judges: list[JudgeScore] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    """Guardrail findings (a dominating term, a plateau)."""
    synthesis: str = "mean"
    """How the judges' scores became one (:mod:`langmarl.p2p.agents.synthesis`)."""


class CheckResult(BaseModel):
    """A check's verdict on the evaluation episodes of one trained run
    (:mod:`langmarl.p2p.design.checks`): a score only if it scored every episode."""

    score: float | None = None
    """The mean of the episodes' scores, in [0, 1]; None when the check gave no score."""
    passed: bool = False
    """Whether ``score`` reaches the session's ``pass_threshold``."""
    reason: str = ""
    """Why there is no score (a crash, a timeout, a value that is not a number in [0, 1])."""
    episodes: list[float] = Field(default_factory=list)
    """Each evaluation episode's score, in the order the run saved them."""
    interval: ScoreInterval | None = None
    """``score`` with its 95% confidence interval over the episodes."""


class ReviseResult(BaseModel):
    """What the reviser proposed and what was applied."""

    reward_code: str | None = None
    """The revised reward source, or None when the reviser gave no usable code."""
    hp_changes: dict[str, float] = Field(default_factory=dict)
    """Hyperparameter changes applied (after whitelisting and clamping)."""
    rejected: dict[str, str] = Field(default_factory=dict)
    """Proposed changes that were dropped, with why."""
    notes: str = ""
    tool_calls: list[ToolUse] = Field(default_factory=list)
    """The look-back tools the model called, in order."""
    tool_protocol: Literal["none", "functions", "text"] = "none"
    """How the tools were offered: not at all (``reviser_tool_rounds=0``), as OpenAI
    function calling, or as ``CALL`` lines in plain text."""


class ConfigResult(BaseModel):
    """One of an iteration's configs, over its seeds."""

    index: int
    """Its place in the iteration's configs (0: the iteration's own config)."""
    runs: list[str] = Field(default_factory=list)
    """Run ids of its seeds that finished."""
    mean_return: float = 0.0
    """Mean final episodic return over those runs."""


class IterationAggregation(BaseModel):
    """Training results of one iteration over configs x seeds."""

    runs: dict[str, TrainSummary] = Field(default_factory=dict)
    """Run id -> summary, for runs that finished."""
    errors: dict[str, str] = Field(default_factory=dict)
    """Run id -> error, for runs that failed."""
    mean_return: float = 0.0
    """Mean final return over the seeds of the judged config (``best_config``)."""
    best_run: str | None = None
    """The judged run (videos, trajectory): the median-return seed of ``best_config``."""
    configs: list[ConfigResult] = Field(default_factory=list)
    """Each config's finished runs and mean return."""
    best_config: int | None = None
    """The config whose seeds returned most on average."""


class IterationOutcome(BaseModel):
    """What training and judging one iteration produced: the reviser's inputs, saved as
    ``outcome.json`` so a resumed session revises without training the iteration again."""

    judgment: JudgmentResult
    term_means: dict[str, float] = Field(default_factory=dict)
    """Per-step mean of each reward term (the judged run's summary)."""
    measurements: str = ""
    """The trajectory measurements shown to the reviser."""
    mean_return: float = 0.0
    check: CheckResult | None = None
    """The session's check on this iteration's episodes (None: the session has no check)."""

    @property
    def score(self) -> float | None:
        """The score that decides: the check's when the session has one (None if it gave no
        score), else the judges' synthesized one."""
        return self.check.score if self.check is not None else self.judgment.intent_score

    @property
    def passed(self) -> bool:
        """Whether the iteration passes, by the check when there is one."""
        return self.check.passed if self.check is not None else self.judgment.passed


class CandidateResult(BaseModel):
    """One candidate reward of an iteration (``LoopConfig.candidates``), as trained."""

    name: str
    """``c_1``, ``c_2`` …: its directory under the iteration's ``candidates/`` (with one
    candidate, the iteration's own directory)."""
    origin: RewardOrigin
    proposal: str = ""
    """Its proposal in one line (:meth:`~langmarl.p2p.design.proposals.Proposal.describe`;
    empty for free-form code)."""
    judged: bool = False
    score: float | None = None
    """What decides: the check's score, else the judges' (None: not judged, or no score)."""
    interval: ScoreInterval | None = None
    mean_return: float | None = None
    term_means: dict[str, float] = Field(default_factory=dict)
    """Per-term means of its training: what the next iteration's proposals read."""
    error: str | None = None


class IterationResult(BaseModel):
    """One loop iteration as the session history records it."""

    iteration: int
    iteration_id: str
    reward_origin: RewardOrigin
    validation_errors: list[str] = Field(default_factory=list)
    intent_score: float | None = None
    """The score that decides (:attr:`IterationOutcome.score`): the check's when the session
    has one, else the judges'; None until judged, or when the check gave no score."""
    judged: bool = False
    """Trained and judged: its ``outcome.json`` is final (False in histories written before
    checks, where a score means judged)."""
    judge_score: float | None = None
    """The judges' synthesized score, recorded beside the check's when a check decides."""
    interval: ScoreInterval | None = None
    """The check's score over the episodes with its 95% interval (None without a check)."""
    mean_return: float | None = None
    hp_changes: dict[str, float] = Field(default_factory=dict)
    error: str | None = None
    candidates: list[CandidateResult] = Field(default_factory=list)
    """What the iteration trained, the best of which is the iteration (``winner``)."""
    winner: str | None = None


class LoopResult(BaseModel):
    """A whole session: its status and where the best iteration is."""

    session_id: str
    prompt: str
    env_id: str
    status: SessionStatus
    error: str | None = None
    best_iteration: int | None = None
    best_score: float | None = None
    iterations: list[IterationResult] = Field(default_factory=list)
    criteria: str = ""
    """The elaborated behaviour criteria the judges scored against."""
    judge_code_problem: str | None = None
    """Why the configured code judge is missing (its authoring failed); None when it runs."""
    objectives: list[str] = Field(default_factory=list)
    """The structured author's order of the env's objectives for the intent (most likely
    first), which the search tries them in (empty: another author)."""
    scored_by: Literal["judges", "check"] = "judges"
    """What the iterations' scores come from: the LLM judges, or the session's check."""
    baseline: CheckResult | None = None
    """The check's score of a policy trained on the environment's own reward at the session's
    budget (``LoopConfig.baseline``): what a user gets without reward design."""
    ppo_steps: int = 0
    """PPO steps trained over every candidate of every iteration (configs x seeds x
    ``total_timesteps`` each; the baseline not counted): the search's budget spent."""
