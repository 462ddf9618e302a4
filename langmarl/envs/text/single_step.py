"""``SingleStepEnv``: one question, one answer, one verified reward — batched.

A batch of data points is drawn at ``reset``; ``step`` takes the answers to some or all of
them, verifies them together (each item succeeds or fails on its own, unlike CAMEL where one
failing verification fails the whole batch), and marks them done.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any, ClassVar

from langmarl.datasets.generator import BaseGenerator
from langmarl.datasets.models import DataPoint
from langmarl.datasets.static import StaticDataset
from langmarl.envs.text.models import (
    Action,
    EnvInputError,
    EnvStateError,
    Observation,
    StepResult,
    StepTuple,
)
from langmarl.verifiers.base import BaseVerifier
from langmarl.verifiers.models import VerificationOutcome, VerificationResult

logger = logging.getLogger(__name__)
StepInput = Action | list[Action] | str | dict[int, str]


class SingleStepEnv:
    """A single-step environment: a dataset of problems and a verifier that scores answers.

    Args:
        dataset: Where problems come from (a finite dataset or a generator).
        verifier: Checks each answer against the data point's ``final_answer``.
        **kwargs: Kept as metadata.
    """

    PLACEHOLDER_OBS: ClassVar[Observation] = Observation(
        question="Episode ended. This is just a placeholder.", context={}, metadata=None
    )
    ACCURACY_REWARD: ClassVar[float] = 1

    def __init__(
        self, dataset: StaticDataset | BaseGenerator, verifier: BaseVerifier, **kwargs: Any
    ) -> None:
        self.dataset = dataset
        self.verifier = verifier
        self._metadata: dict[str, Any] = dict(kwargs)
        self._is_setup = False
        self._states: list[DataPoint] = []
        self._states_done: list[bool] = []
        self.current_batch_size = 0

    async def setup(self) -> None:
        """Set up the verifier (idempotent)."""
        if self._is_setup:
            return
        await self.verifier.setup()
        self._is_setup = True

    async def close(self) -> None:
        """Clean up the verifier and forget the batch (idempotent)."""
        if not self._is_setup:
            return
        await self.verifier.cleanup()
        self._is_setup = False
        self._states, self._states_done, self.current_batch_size = [], [], 0

    async def reset(
        self, batch_size: int = 1, seed: int | None = None
    ) -> Observation | list[Observation]:
        """Draw ``batch_size`` data points and return their observations (one, or a list);
        each observation carries its data point's metadata (as CAMEL).

        Sampling uses a local RNG seeded with ``seed``; the global ``random`` state is untouched.

        Raises:
            EnvStateError: (a ``RuntimeError``) when the current batch is partly answered
                (CAMEL's rule; a batch with no answer yet is simply redrawn).
            ValueError: if ``batch_size`` is below 1 or exceeds a static dataset's size.
            TypeError: for an unsupported dataset type.
        """
        if not self._is_setup:
            await self.setup()
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if any(self._states_done) and not all(self._states_done):
            # As CAMEL: a batch partly answered must be finished first; one not yet answered
            # at all may be redrawn.
            raise EnvStateError(
                f"reset() called before all states of the batch were answered: states "
                f"{[i for i, done in enumerate(self._states_done) if not done]} are left; "
                "step() on them first"
            )
        self._states = await self._sample(batch_size, random.Random(seed))
        self._states_done = [False] * batch_size
        self.current_batch_size = batch_size
        observations = [
            Observation(question=p.question, context={}, metadata=dict(p.metadata or {}))
            for p in self._states
        ]
        return observations[0] if batch_size == 1 else observations

    async def _sample(self, batch_size: int, rng: random.Random) -> list[DataPoint]:
        if isinstance(self.dataset, StaticDataset):
            if batch_size > len(self.dataset):
                raise ValueError(
                    f"batch_size {batch_size} exceeds the dataset size {len(self.dataset)}; "
                    "use a smaller batch"
                )
            return [self.dataset[i] for i in rng.sample(range(len(self.dataset)), batch_size)]
        if isinstance(self.dataset, BaseGenerator):
            return [await self.dataset.async_sample() for _ in range(batch_size)]
        raise TypeError(
            "SingleStepEnv dataset must be a StaticDataset or BaseGenerator, "
            f"got {type(self.dataset).__name__}"
        )

    async def step(self, action: StepInput) -> StepTuple | list[StepTuple]:
        """Verify the answers in ``action`` and return their step results.

        ``action`` is an ``Action`` (its ``index`` picks the state), a list of them, a string
        (batch of one only) or a dict index → response. Returns one tuple for an ``Action``
        or string, a list for a list or dict. Each tuple is ``(PLACEHOLDER_OBS, reward, True,
        info)`` with ``info`` = proposed solution, verification result, data point, reward parts.

        Raises:
            EnvStateError: (a ``RuntimeError``) before setup/reset or for an answered state.
            EnvInputError: (a ``ValueError``) for a bad action type, index or duplicate.
        """
        if not self._is_setup:
            raise EnvStateError("SingleStepEnv is not set up: await env.setup() first")
        if not self._states:
            raise EnvStateError("SingleStepEnv has no batch: await env.reset() first")
        actions = self._normalize(action)
        self._check_indices(actions)
        results = await self._verify(actions)
        steps = [await self._step_result(a, r) for a, r in zip(actions, results, strict=True)]
        return steps if isinstance(action, list | Mapping) else steps[0]

    def _normalize(self, action: Any) -> list[Action]:
        if isinstance(action, Action):
            return [action]
        if isinstance(action, str):
            if self.current_batch_size != 1:
                raise EnvInputError(
                    "a plain string answers a batch of 1, but the batch has "
                    f"{self.current_batch_size}; "
                    "pass a dict {index: response} or a list of Action"
                )
            return [Action(index=0, llm_response=action)]
        if isinstance(action, Mapping):
            return [
                Action(index=i, llm_response=r if isinstance(r, str) else "")
                for i, r in action.items()
            ]
        if isinstance(action, list) and action and all(isinstance(a, Action) for a in action):
            return list(action)
        raise EnvInputError(
            f"step() takes an Action, a non-empty list of Action, a str or a dict index → str, "
            f"got {type(action).__name__}"
        )

    def _check_indices(self, actions: list[Action]) -> None:
        indices = [a.index for a in actions]
        bad = [i for i in indices if not isinstance(i, int) or not 0 <= i < self.current_batch_size]
        if bad:
            raise EnvInputError(
                f"action indices {bad} are out of range 0..{self.current_batch_size - 1}"
            )
        if len(set(indices)) != len(indices):
            raise EnvInputError(f"duplicate action indices in {indices}")
        answered = [i for i in indices if self._states_done[i]]
        if answered:
            raise EnvStateError(
                f"states {answered} were already answered; await env.reset() for a new batch"
            )

    async def _verify(self, actions: list[Action]) -> list[VerificationResult]:
        solutions = [a.llm_response for a in actions]
        references = [self._states[a.index].final_answer for a in actions]
        try:
            return await self.verifier.verify_batch(solutions, references, raise_on_error=False)
        except Exception as exc:  # a broken verifier must not take the whole batch down silently
            logger.exception("verify_batch failed; verifying items one by one")
            return [
                await self._verify_alone(s, r, exc)
                for s, r in zip(solutions, references, strict=True)
            ]

    async def _verify_alone(
        self, solution: str, reference: str, batch_error: Exception
    ) -> VerificationResult:
        try:
            return await self.verifier.verify(solution, reference)
        except Exception as exc:
            return VerificationResult(
                status=VerificationOutcome.ERROR,
                error_message=f"{type(exc).__name__}: {exc} (batch: {batch_error})",
            )

    async def _step_result(self, action: Action, result: VerificationResult) -> StepTuple:
        correct = self.ACCURACY_REWARD if result.status == VerificationOutcome.SUCCESS else 0.0
        rewards = {
            "correctness": float(correct),
            **await self._compute_custom_reward(action.llm_response, result),
        }
        self._states_done[action.index] = True
        info = {
            "proposed_solution": action.llm_response,
            "verification_result": result,
            "state": self._states[action.index],
            "rewards_dict": rewards,
        }
        step = StepResult(
            observation=self.PLACEHOLDER_OBS,
            reward=sum(rewards.values()),
            rewards_dict=rewards,
            done=True,
            info=info,
        )
        return step.as_tuple()

    async def _compute_custom_reward(
        self, proposed_solution: str, verification_result: VerificationResult
    ) -> dict[str, float]:
        """Subclass hook: extra reward components, added to correctness. Default: none."""
        return {}

    @property
    def metadata(self) -> dict[str, Any]:
        """A copy of the environment's metadata."""
        return dict(self._metadata)
