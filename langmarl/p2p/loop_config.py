"""`LoopConfig`: the settings of one Prompt2Policy session (saved in its ``run.json``, so a
resumed session runs with the settings it started with)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langmarl.p2p.train_config import TrainConfig


class LoopConfig(BaseModel):
    """Settings of one Prompt2Policy session."""

    model_config = ConfigDict(extra="forbid")

    env_id: str = "HalfCheetah-v5"
    """Gymnasium MuJoCo env id."""
    max_iterations: int = Field(default=5, ge=1)
    """Train/judge/revise rounds at most."""
    pass_threshold: float = Field(default=0.7, ge=0, le=1)
    """Intent score at which the session passes."""
    elaborate: bool = True
    """Turn the intent into measurable criteria first (one LLM call)."""
    review: bool = True
    """Have the LLM review the authored reward before validation."""
    max_fix_attempts: int = Field(default=2, ge=0)
    """LLM fix rounds when reward code fails validation."""
    fallback: Literal["template", "none"] = "template"
    """When no authored reward validates: "template" trains the env's own reward terms
    (marked origin="fallback"); "none" stops with status invalid_code."""
    code_judge: bool = True
    """Write a judge_fn once per session and run it (sandboxed) on every iteration."""
    summary_judge: bool = True
    """Let the LLM score the episode's measurements."""
    hp_tuning: bool = True
    """Let the reviser change whitelisted hyperparameters (clamped, see HP_BOUNDS)."""
    total_timesteps: int = Field(default=100_000, ge=1)
    """Training budget per run."""
    seeds: list[int] = Field(default_factory=lambda: [1])
    """Seeds per iteration (one executor process each)."""
    train: dict[str, Any] = Field(default_factory=dict)
    """TrainConfig overrides on top of the env preset."""
    max_parallel: int | None = None
    """Training processes at once (default: CPU count)."""
    train_timeout_s: float = Field(default=3600.0, gt=0)
    """Wall-clock limit per training run."""
    dominance_threshold: float = Field(default=0.8, gt=0, le=1)
    """Share of reward magnitude above which one term is flagged as dominating."""

    def train_config(self) -> TrainConfig:
        """The first iteration's TrainConfig."""
        return TrainConfig.for_env(self.env_id, total_timesteps=self.total_timesteps, **self.train)
