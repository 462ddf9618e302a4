"""The records text environments exchange: actions, observations, step results."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from langmarl.core.errors import EnvError


class EnvStateError(EnvError, RuntimeError):
    """An environment was used out of order: stepped before setup/reset or after the end."""


class EnvInputError(EnvError, ValueError):
    """An action's shape is wrong (not its content): bad or duplicate batch indices, …"""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Action(BaseModel):
    """What the LLM did: its response, plus metadata for verification and tracking.

    Attributes:
        index: Which observation of a batch this answers (``SingleStepEnv``); 0 otherwise.
        llm_response: The raw text the model produced.
        metadata: Model parameters, prompt details, confidence scores, …
        timestamp: When the action was generated (UTC).
    """

    index: int = 0
    llm_response: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    timestamp: datetime = Field(default_factory=_utc_now)


class Observation(BaseModel):
    """What the environment shows the LLM.

    Attributes:
        question: The prompt posed to the LLM.
        context: Additional context for the question.
        metadata: Optional metadata about the observation.
    """

    question: str
    context: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] | None = None


class StepResult(BaseModel):
    """The result of one environment step.

    Attributes:
        observation: The next observation.
        reward: The total reward of the step.
        rewards_dict: Reward components by name.
        done: Whether the episode is complete.
        info: Anything else about the step.
    """

    observation: Observation
    reward: float
    rewards_dict: dict[str, float] = Field(default_factory=dict)
    done: bool
    info: dict[str, Any] = Field(default_factory=dict)

    def as_tuple(self) -> tuple[Observation, float, bool, dict[str, Any]]:
        """``(observation, reward, done, info)``, in declaration order.

        This is the tuple ``step`` returns (the reference's signature); ``rewards_dict`` is
        left out so code written for CAMEL unpacks four values.
        """
        return (self.observation, self.reward, self.done, self.info)


StepTuple = tuple[Observation, float, bool, dict[str, Any]]


@runtime_checkable
class Environment(Protocol):
    """The async contract every text environment meets.

    ``reset()`` starts an episode and returns its first observation. ``step(action)`` applies
    one ``Action`` and returns ``(observation, reward, done, info)``: the next observation
    (a placeholder once ``done``), the reward of this step, whether the episode ended, and a
    dict of details. Bad model output never raises out of ``step``; it is scored (an illegal
    move, a failed verification). Misuse (stepping before ``reset``, after ``done``) raises.
    ``close()`` releases every resource.
    """

    async def reset(self) -> Observation:
        """Start a new episode; returns the initial observation."""
        ...

    async def step(self, action: Action) -> Any:
        """Apply ``action``; returns ``(observation, reward, done, info)``."""
        ...

    async def close(self) -> None:
        """Release all resources."""
        ...
