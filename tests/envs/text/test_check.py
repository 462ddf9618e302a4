"""check_env accepts the built-in environments and names what a broken one violates."""

from __future__ import annotations

from typing import Any

import pytest

from langmarl.datasets import StaticDataset
from langmarl.envs import (
    Action,
    EnvConformanceError,
    MultiStepEnv,
    Observation,
    SingleStepEnv,
    TicTacToeEnv,
    acheck_env,
    check_env,
)
from langmarl.extractors import BaseExtractor, StripStrategy
from langmarl.verifiers import MathVerifier


def test_tictactoe_conforms() -> None:
    check_env(TicTacToeEnv(max_steps=5))


async def test_single_step_with_math_verifier_conforms() -> None:
    data = [{"question": "1+1?", "final_answer": "2"}, {"question": "2+3?", "final_answer": "5"}]
    await acheck_env(SingleStepEnv(StaticDataset(data), MathVerifier(timeout=10)))


async def test_a_reset_that_drops_a_partly_answered_batch_is_reported() -> None:
    class Forgetful(SingleStepEnv):
        async def reset(
            self, batch_size: int = 1, seed: int | None = None
        ) -> Observation | list[Observation]:
            self._states_done = []  # drops unanswered states instead of refusing (not CAMEL)
            return await super().reset(batch_size, seed)

    data = [{"question": "1+1?", "final_answer": "2"}, {"question": "2+3?", "final_answer": "5"}]
    with pytest.raises(EnvConformanceError, match="reset\\(\\) with a partly answered batch"):
        await acheck_env(Forgetful(StaticDataset(data), MathVerifier(timeout=10)))


async def test_check_env_refuses_to_nest_event_loops() -> None:
    with pytest.raises(RuntimeError, match="acheck_env"):
        check_env(TicTacToeEnv())


class Echo(MultiStepEnv):
    """Ends after one step; ``crash`` makes bad input raise (a contract violation)."""

    def __init__(self, crash: bool = False) -> None:
        super().__init__(BaseExtractor([[StripStrategy()]]))
        self.crash = crash

    def _get_initial_state(self) -> dict[str, Any]:
        return {"said": None}

    async def _update_state(self, action: Action) -> None:
        said = await self.extractor.extract(action.llm_response)
        if said is None and self.crash:
            raise ValueError("empty answer")
        self._state["said"] = said

    def _get_next_observation(self) -> Observation:
        return Observation(question="Say something.")

    def _get_terminal_observation(self) -> Observation:
        return Observation(question=f"You said {self._state['said']!r}")

    def _is_done(self) -> bool:
        return True

    async def compute_reward(self) -> tuple[float, dict[str, float]]:
        return float(self._state["said"] is not None), {}


async def test_a_minimal_subclass_conforms_and_a_raising_one_does_not() -> None:
    await acheck_env(Echo())
    with pytest.raises(EnvConformanceError, match=r"empty answer.*must be scored"):
        await acheck_env(Echo(crash=True))


class NaNReward(Echo):
    async def compute_reward(self) -> tuple[float, dict[str, float]]:
        return float("nan"), {}


async def test_non_finite_rewards_are_reported() -> None:
    with pytest.raises(EnvConformanceError, match="finite"):
        await acheck_env(NaNReward())


async def test_objects_without_the_protocol_are_reported() -> None:
    with pytest.raises(EnvConformanceError, match="lacks async reset"):
        await acheck_env(object())
