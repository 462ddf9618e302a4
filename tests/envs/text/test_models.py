"""The CAMEL-style records and MultiStepEnv's lifecycle hooks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langmarl.envs import Action, MultiStepEnv, Observation, StepResult
from langmarl.extractors import BaseExtractor, StripStrategy


def test_step_result_as_tuple_is_the_step_signature() -> None:
    observation = Observation(question="q", context={"k": 1})
    result = StepResult(
        observation=observation, reward=0.5, rewards_dict={"correct": 0.5}, done=True, info={"a": 1}
    )
    as_tuple = result.as_tuple()
    assert len(as_tuple) == 4  # rewards_dict is left out, as code written for CAMEL expects
    obs, reward, done, info = as_tuple
    assert obs is observation and reward == 0.5 and done is True and info == {"a": 1}


def test_action_defaults() -> None:
    before = datetime.now(UTC)
    action = Action(llm_response="<Action> 5")
    assert action.index == 0 and action.metadata == {}
    assert before <= action.timestamp <= datetime.now(UTC)
    assert Action(llm_response="x").metadata is not action.metadata  # no shared default


class Lifecycle(MultiStepEnv):
    """Records every hook call; ends after two steps."""

    def __init__(self) -> None:
        super().__init__(BaseExtractor([[StripStrategy()]]), max_steps=5)
        self.calls: list[str] = []

    async def _setup(self) -> None:
        self.calls.append("setup")

    async def _close(self) -> None:
        self.calls.append("close")

    def _get_initial_state(self) -> dict[str, Any]:
        self.calls.append("initial")
        return {"turns": 0}

    async def _update_state(self, action: Action) -> None:
        self.calls.append(f"update:{action.llm_response}")
        self._state["turns"] += 1

    def _get_next_observation(self) -> Observation:
        return Observation(question=f"turn {self._state['turns']}")

    def _get_terminal_observation(self) -> Observation:
        return Observation(question="over")

    def _is_done(self) -> bool:
        return bool(self._state["turns"] >= 2)

    async def compute_reward(self) -> tuple[float, dict[str, float]]:
        return float(self._state["turns"]), {"turns": float(self._state["turns"])}


async def test_multi_step_hooks_run_in_order() -> None:
    env = Lifecycle()
    first = await env.reset()  # sets up first
    await env.setup()  # idempotent
    assert first.question == "turn 0" and env.current_step == 0
    _, _, done, info = await env.step(Action(llm_response="a"))
    assert not done and info["rewards_dict"] == {"turns": 1.0} and info["step"] == 1
    obs, reward, done, info = await env.step(Action(llm_response="b"))
    assert done and obs.question == "over" and reward == 2.0 and env.is_done()
    await env.close()
    await env.close()  # idempotent
    assert env.calls == ["setup", "initial", "update:a", "update:b", "close"]
