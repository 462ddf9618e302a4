"""SingleStepEnv: sampling, action forms, batched verification, errors, custom reward."""

from __future__ import annotations

import asyncio
import random

import pytest

from langmarl.datasets import BaseGenerator, DataPoint, StaticDataset
from langmarl.envs import Action, EnvInputError, EnvStateError, Observation, SingleStepEnv
from langmarl.verifiers import (
    BaseVerifier,
    ExactMatchVerifier,
    VerificationOutcome,
    VerificationResult,
)

DATA = [{"question": f"What is {i}+{i}?", "final_answer": str(2 * i)} for i in range(6)]


async def _env(**kwargs: object) -> SingleStepEnv:
    env = SingleStepEnv(StaticDataset(DATA), ExactMatchVerifier(max_retries=0), **kwargs)
    await env.setup()
    return env


def _answer(observation: Observation) -> str:
    i = int(observation.question.split()[2].split("+")[0])
    return str(2 * i)


async def test_reset_is_seeded_locally_and_batches() -> None:
    env = await _env()
    random.seed(1)
    expected_global = random.random()
    random.seed(1)
    first = await env.reset(batch_size=3, seed=42)
    second = await env.reset(batch_size=3, seed=42)
    assert isinstance(first, list) and [o.question for o in first] == [o.question for o in second]
    assert random.random() == expected_global
    single = await env.reset()
    assert isinstance(single, Observation)
    with pytest.raises(ValueError, match="exceeds the dataset size 6"):
        await env.reset(batch_size=7)
    with pytest.raises(ValueError, match="at least 1"):
        await env.reset(batch_size=0)


async def test_step_with_a_string_returns_one_tuple_with_info() -> None:
    env = await _env()
    observation = await env.reset(seed=0)
    assert isinstance(observation, Observation)
    obs, reward, done, info = await env.step(_answer(observation))
    assert obs == SingleStepEnv.PLACEHOLDER_OBS and done and reward == SingleStepEnv.ACCURACY_REWARD
    assert info["verification_result"].status == VerificationOutcome.SUCCESS
    assert info["state"].question == observation.question
    assert info["proposed_solution"] == _answer(observation)


async def test_dict_and_list_actions_answer_parts_of_a_batch() -> None:
    env = await _env()
    observations = await env.reset(batch_size=3, seed=1)
    assert isinstance(observations, list)
    results = await env.step({0: _answer(observations[0]), 2: "wrong"})
    assert isinstance(results, list) and [r[1] for r in results] == [1.0, 0.0]
    ((_, reward, done, _),) = await env.step(
        [Action(index=1, llm_response=_answer(observations[1]))]
    )
    assert reward == 1.0 and done
    with pytest.raises(EnvStateError, match="already answered"):
        await env.step({0: "again"})


async def test_bad_action_shapes_raise_clear_errors() -> None:
    env = await _env()
    await env.reset(batch_size=2, seed=0)
    with pytest.raises(EnvInputError, match="batch of 1"):
        await env.step("x")
    with pytest.raises(EnvInputError, match="out of range"):
        await env.step({5: "x"})
    with pytest.raises(EnvInputError, match="duplicate"):
        await env.step([Action(index=0, llm_response="a"), Action(index=0, llm_response="b")])
    with pytest.raises(ValueError):
        await env.step(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await env.step([])


async def test_step_before_setup_or_reset_raises_runtime_error() -> None:
    env = SingleStepEnv(StaticDataset(DATA), ExactMatchVerifier())
    with pytest.raises(RuntimeError, match="set up"):
        await env.step("x")
    await env.setup()
    with pytest.raises(RuntimeError, match="reset"):
        await env.step("x")


@pytest.mark.parametrize("response", ["", "   ", "\x00garbage\ufffd", "x" * 50_000])
async def test_garbage_responses_score_zero_without_raising(response: str) -> None:
    env = await _env()
    await env.reset(seed=0)
    _, reward, done, info = await env.step(response)
    assert reward == 0.0 and done
    assert info["verification_result"].status == VerificationOutcome.FAILURE


class OneSlowOneBroken(BaseVerifier):
    async def _verify_implementation(
        self, solution: str, reference: str | None
    ) -> VerificationResult:
        if solution == "hang":
            await asyncio.sleep(30)
        if solution == "crash":
            raise RuntimeError("verifier bug")
        status = (
            VerificationOutcome.SUCCESS if solution == reference else VerificationOutcome.FAILURE
        )
        return VerificationResult(status=status)


async def test_one_failing_or_timed_out_verification_fails_alone() -> None:
    env = SingleStepEnv(StaticDataset(DATA), OneSlowOneBroken(timeout=0.2, max_retries=0))
    await env.setup()
    observations = await env.reset(batch_size=3, seed=2)
    assert isinstance(observations, list)
    results = await env.step({0: "hang", 1: "crash", 2: _answer(observations[2])})
    assert isinstance(results, list)
    statuses = [r[3]["verification_result"].status for r in results]
    assert statuses == [
        VerificationOutcome.TIMEOUT,
        VerificationOutcome.ERROR,
        VerificationOutcome.SUCCESS,
    ]
    assert [r[1] for r in results] == [0.0, 0.0, 1.0]


class LengthBonus(SingleStepEnv):
    async def _compute_custom_reward(
        self, proposed_solution: str, verification_result: VerificationResult
    ) -> dict[str, float]:
        return {"brevity": 0.5 if len(proposed_solution) < 3 else 0.0}


async def test_custom_reward_is_added_to_correctness() -> None:
    env = LengthBonus(StaticDataset(DATA), ExactMatchVerifier())
    observation = await env.reset(seed=3)
    assert isinstance(observation, Observation)
    _, reward, _, info = await env.step(_answer(observation))
    assert reward == 1.5 and info["rewards_dict"] == {"correctness": 1.0, "brevity": 0.5}


class Squares(BaseGenerator):
    async def generate_new(self, n: int, **kwargs: object) -> list[DataPoint]:
        return [DataPoint(question=f"{i}^2?", final_answer=str(i * i)) for i in range(n)]


async def test_generator_datasets_and_close() -> None:
    env = SingleStepEnv(Squares(buffer=4), ExactMatchVerifier(), tag="t")
    observations = await env.reset(batch_size=2)
    assert [o.question for o in observations] == ["0^2?", "1^2?"]  # type: ignore[union-attr]
    assert env.metadata == {"tag": "t"}
    await env.close()
    await env.close()
    with pytest.raises(RuntimeError):
        await env.step("0")
    with pytest.raises(TypeError, match="StaticDataset or BaseGenerator"):
        await SingleStepEnv([1, 2], ExactMatchVerifier()).reset()  # type: ignore[arg-type]


async def test_reset_refuses_a_partly_answered_batch_as_camel() -> None:
    """CAMEL's SingleStepEnv.reset raises RuntimeError "reset() called before all states in
    batch were processed" when some but not all states are done (``_batch_started() and not
    _batch_done()``); a batch with no answer yet may be redrawn."""
    env = await _env()
    observations = await env.reset(batch_size=3, seed=1)
    assert isinstance(observations, list)
    await env.reset(batch_size=3, seed=2)  # nothing answered yet: redrawn
    await env.step({0: "x"})
    with pytest.raises(RuntimeError, match=r"states \[1, 2\] are left"):
        await env.reset(batch_size=3, seed=3)
    with pytest.raises(EnvStateError):
        await env.reset()
    await env.step({1: "x", 2: "y"})
    assert isinstance(await env.reset(), Observation)  # all answered: a new batch


async def test_observations_carry_the_data_point_metadata() -> None:
    data = [{"question": "q", "final_answer": "a", "metadata": {"level": 3}}]
    env = SingleStepEnv(StaticDataset(data), ExactMatchVerifier(max_retries=0))
    observation = await env.reset()
    assert isinstance(observation, Observation) and observation.metadata == {"level": 3}
