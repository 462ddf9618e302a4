"""``MultiStepEnv``: the base of text environments that run for several steps.

Subclasses fill in the hooks (same names as CAMEL's, so environments port by changing
imports): ``_get_initial_state``, ``_update_state``, ``_get_next_observation``,
``_get_terminal_observation``, ``_is_done``, ``compute_reward`` and optionally ``_setup`` and
``_close``.
"""

from __future__ import annotations

import copy
import logging
from abc import ABC, abstractmethod
from typing import Any

from langmarl.envs.text.models import (
    Action,
    EnvStateError,
    Observation,
    StepResult,
    StepTuple,
)
from langmarl.extractors.base import BaseExtractor

logger = logging.getLogger(__name__)


class MultiStepEnv(ABC):
    """A multi-step environment for reinforcement learning with LLMs.

    Args:
        extractor: Pulls the relevant part (a move, an answer) out of each response.
        max_steps: End the episode after this many steps (``None``: only ``_is_done``).
        **kwargs: Kept as the environment's metadata.
    """

    def __init__(
        self, extractor: BaseExtractor, max_steps: int | None = None, **kwargs: Any
    ) -> None:
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1 or None, got {max_steps!r}")
        self.extractor = extractor
        self.max_steps = max_steps
        self._metadata: dict[str, Any] = dict(kwargs)
        self._is_setup = False
        self._current_step = 0
        self._episode_ended = False
        self._state: dict[str, Any] = {}
        self._last_observation: Observation | None = None
        self._episode_history: list[tuple[Observation, Action]] = []

    async def setup(self) -> None:
        """Set up the extractor and the subclass's resources (idempotent)."""
        if self._is_setup:
            return
        await self.extractor.setup()
        await self._setup()
        self._is_setup = True

    async def close(self) -> None:
        """Release the extractor and the subclass's resources (idempotent)."""
        if not self._is_setup:
            return
        await self.extractor.cleanup()
        await self._close()
        self._is_setup = False
        self._state, self._last_observation, self._episode_history = {}, None, []

    async def reset(self) -> Observation:
        """Start a new episode (setting up first if needed); returns the first observation.

        Raises:
            EnvStateError: (a ``RuntimeError``) if the subclass yields no observation.
        """
        if not self._is_setup:
            await self.setup()
        self._current_step, self._episode_ended, self._episode_history = 0, False, []
        self._state = self._get_initial_state()
        observation = self._get_next_observation()
        if observation is None:
            raise EnvStateError(f"{type(self).__name__}._get_next_observation returned None")
        self._last_observation = observation
        return observation

    async def step(self, action: Action) -> StepTuple:
        """Apply ``action``; returns ``(observation, reward, done, info)``.

        ``info`` holds ``step``, ``rewards_dict`` and a copy of the ``state``.

        Raises:
            EnvStateError: (a ``RuntimeError``) before setup or reset, or after the episode ended.
        """
        self._check_can_step()
        assert self._last_observation is not None  # checked above
        self._episode_history.append((self._last_observation, action))
        await self._update_state(action)
        self._current_step += 1
        reward, rewards_dict = await self.compute_reward()
        done = self.is_done()
        observation = self._get_terminal_observation() if done else self._get_next_observation()
        self._last_observation, self._episode_ended = observation, done
        info = {
            "step": self._current_step,
            "rewards_dict": rewards_dict,
            "state": copy.deepcopy(self._state),
        }
        result = StepResult(
            observation=observation, reward=reward, rewards_dict=rewards_dict, done=done, info=info
        )
        return result.as_tuple()

    def _check_can_step(self) -> None:
        if not self._is_setup:
            raise EnvStateError(f"{type(self).__name__} is not set up: await env.setup() first")
        if self._last_observation is None:
            raise EnvStateError(f"{type(self).__name__} has no episode: await env.reset() first")
        if self._episode_ended:
            raise EnvStateError(
                f"{type(self).__name__}'s episode has ended: await env.reset() to start another"
            )

    def is_done(self) -> bool:
        """True once ``max_steps`` steps were taken or the subclass says the episode ended."""
        if self.max_steps is not None and self._current_step >= self.max_steps:
            return True
        return self._is_done()

    @property
    def current_step(self) -> int:
        """How many steps the current episode has taken."""
        return self._current_step

    @property
    def metadata(self) -> dict[str, Any]:
        """A copy of the environment's metadata (the extra constructor arguments)."""
        return dict(self._metadata)

    async def _setup(self) -> None:  # noqa: B027 - optional hook
        """Subclass hook: acquire resources."""

    async def _close(self) -> None:  # noqa: B027 - optional hook
        """Subclass hook: release resources."""

    @abstractmethod
    def _get_initial_state(self) -> dict[str, Any]:
        """The state at the start of an episode."""

    @abstractmethod
    async def _update_state(self, action: Action) -> None:
        """Apply ``action`` to ``self._state``. Bad model output must be scored, not raised."""

    @abstractmethod
    def _get_next_observation(self) -> Observation:
        """The observation for the next step."""

    @abstractmethod
    def _get_terminal_observation(self) -> Observation:
        """The observation once the episode ended."""

    @abstractmethod
    def _is_done(self) -> bool:
        """Whether the episode ended by the environment's own rules."""

    @abstractmethod
    async def compute_reward(self) -> tuple[float, dict[str, float]]:
        """``(total reward, components by name)`` for the step just taken."""
