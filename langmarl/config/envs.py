"""Per-environment configs: the reference fields and defaults, validated."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from langmarl.config.base import BaseConfig

TaskType = Literal["qa", "math", "writing", "coding"]


class LanguageTaskConfig(BaseConfig):
    """Language tasks: N agents collaborate in sequence on qa, math, writing or coding."""

    env: str = "language"
    task_type: TaskType = "qa"
    """Task type."""
    benchmark_path: str | None = None
    """Benchmark file or directory (GSM8K/MATH/HumanEval/HotpotQA/creative-writing JSONL);
    ``None`` uses the small task set shipped with langmarl."""
    data_limit: int | None = Field(default=None, ge=1)
    """Load at most this many tasks (``None``: all)."""
    use_verified_reward: bool = False
    """Verify rewards with an LLM judge where the task allows it."""


class OvercookedConfig(BaseConfig):
    """Overcooked: two cooks, skill-level text actions, +20 per delivered soup."""

    env: str = "overcooked"
    layout: str = "cramped_room"
    """Kitchen layout name."""
    episode_horizon: int = Field(default=400, ge=1)
    """Maximum timesteps per episode."""
    p0_agent: str = "ProAgent"
    """Agent 0 type."""
    p1_agent: str = "ProAgent"
    """Agent 1 type."""


class PistonballConfig(BaseConfig):
    """Pistonball (PettingZoo): N pistons push a ball to the left wall."""

    env: str = "pistonball"
    num_agents: int = Field(default=20, ge=1)
    """Number of agents (one per piston; kept equal to ``num_pistons``)."""
    num_pistons: int = Field(default=20, ge=1)
    """Number of pistons."""
    max_cycles: int = Field(default=125, ge=1)
    """Maximum cycles per episode."""
    frame_size: int = Field(default=84, ge=8)
    """Observation frame size."""
    action_mode: Literal["discrete", "continuous"] = "discrete"
    """Piston action space."""

    @model_validator(mode="before")
    @classmethod
    def _one_agent_per_piston(cls, data: Any) -> Any:
        """Set ``num_agents`` from ``num_pistons`` (or the other way round) when only one is
        given; refuse two different values."""
        if not isinstance(data, dict):
            return data
        agents, pistons = data.get("num_agents"), data.get("num_pistons")
        if agents is not None and pistons is not None and agents != pistons:
            raise ValueError(
                f"num_agents ({agents}) must equal num_pistons ({pistons}): one agent per "
                "piston; set only num_pistons"
            )
        if agents is None and pistons is not None:
            data = {**data, "num_agents": pistons}
        elif pistons is None and agents is not None:
            data = {**data, "num_pistons": agents}
        return data


class TicTacToeConfig(BaseConfig):
    """TicTacToe in language space: one LLM player (X) whose system prompt is trained
    against an :class:`~langmarl.envs.text.tictactoe.Opponent`."""

    env: str = "tictactoe"
    num_agents: int = Field(default=1, ge=1, le=1)
    """One player (the LLM plays X)."""
    play_style: Literal["optimal", "random"] = "optimal"
    """The opponent: exact minimax, or uniformly random moves seeded per episode."""
    max_steps: int = Field(default=12, ge=1)
    """Moves the player may make before the game is cut off."""
