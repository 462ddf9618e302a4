"""``check_env``: a conformance check for text environments (like PettingZoo's api tests).

It drives the environment through its contract — misuse raises, bad model output does not,
results have the documented shapes — and raises :class:`EnvConformanceError` naming the
first violation. It plays whole episodes with garbage answers, so pass a fresh environment
whose ``max_steps`` (if any) keeps episodes short.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from langmarl.core.errors import EnvError
from langmarl.envs.text.models import Action, Environment, Observation
from langmarl.envs.text.single_step import SingleStepEnv

BAD_RESPONSES = (
    "",
    "   \n\t ",
    "asdf qwerty <Action> </Action> \\boxed{",
    "<Action> 99",
    "<Action> -1",
    "ünïcödé ✓ 🙂 " * 20,
    "x" * 20_000,
)
"""Responses every environment must score (not raise on)."""


class EnvConformanceError(EnvError, AssertionError):
    """An environment broke the text-environment contract."""


def check_env(env: Any, *, max_steps: int = 50) -> None:
    """Check ``env`` against the text-environment contract (sync wrapper).

    Raises:
        EnvConformanceError: naming the first violation.
        RuntimeError: if called from a running event loop (use ``await acheck_env(env)``).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(acheck_env(env, max_steps=max_steps))
        return
    raise RuntimeError("check_env() cannot run inside an event loop; use `await acheck_env(env)`")


async def acheck_env(env: Any, *, max_steps: int = 50) -> None:
    """Async :func:`check_env`."""
    _require(isinstance(env, Environment), f"{type(env).__name__} lacks async reset/step/close")
    await _expect_state_error(env.step(Action(llm_response="<Action> 1")), "step() before reset()")
    if isinstance(env, SingleStepEnv):
        await _check_single_step(env)
    else:
        await _check_multi_step(env, max_steps)
    await env.close()
    await env.close()  # closing twice is allowed


async def _check_multi_step(env: Any, max_steps: int) -> None:
    for response in BAD_RESPONSES:
        _check_observation(await env.reset(), "reset()")
        done, steps = False, 0
        while not done and steps < max_steps:
            done = _check_step_tuple(await _step_bad(env, Action(llm_response=response)), response)
            steps += 1
        if done:
            await _expect_state_error(env.step(Action(llm_response=response)), "step() after done")
    _check_metadata(env)


async def _check_single_step(env: SingleStepEnv) -> None:
    for response in BAD_RESPONSES:
        _check_observation(await env.reset(batch_size=1, seed=0), "reset()")
        _require(
            _check_step_tuple(await _step_bad(env, response), response),
            "single-step done must be True",
        )
        await _expect_state_error(env.step(response), "step() on an answered state")
    size = min(2, len(env.dataset)) if hasattr(env.dataset, "__len__") else 2
    observations = await env.reset(batch_size=size, seed=1)
    _require(isinstance(observations, list if size > 1 else Observation), "batched reset shape")
    results = await env.step({0: BAD_RESPONSES[0]})
    _require(isinstance(results, list) and len(results) == 1, "dict step must return a list")
    if size > 1:  # CAMEL: a partly answered batch is finished before the next reset
        await _expect_state_error(
            env.reset(batch_size=size, seed=1), "reset() with a partly answered batch"
        )
    for bad in ({size: "x"}, {-1: "x"}):
        try:
            await env.step(bad)
        except ValueError:
            continue
        raise EnvConformanceError(f"step({bad!r}) with an out-of-range index must raise ValueError")
    _check_metadata(env)


async def _step_bad(env: Any, action: Any) -> Any:
    """Step with bad model output, which must be scored, not raised."""
    try:
        return await env.step(action)
    except Exception as exc:
        text = action.llm_response if isinstance(action, Action) else action
        raise EnvConformanceError(
            f"step() raised {exc!r} for the bad response {text[:30]!r}; bad model output "
            "must be scored (illegal move, failed verification), not raised"
        ) from exc


def _check_observation(observation: Any, where: str) -> None:
    _require(
        isinstance(observation, Observation),
        f"{where} must return an Observation, got {observation!r:.80}",
    )
    _require(isinstance(observation.question, str), f"{where}: question must be a str")


def _check_step_tuple(result: Any, response: str) -> bool:
    where = f"step({response[:30]!r})"
    _require(
        isinstance(result, tuple) and len(result) == 4,
        f"{where} must return (obs, reward, done, info)",
    )
    observation, reward, done, info = result
    _check_observation(observation, where)
    _require(
        isinstance(reward, int | float) and math.isfinite(reward),
        f"{where}: reward {reward!r} is not a finite number",
    )
    _require(isinstance(done, bool), f"{where}: done must be a bool, got {done!r}")
    _require(isinstance(info, dict), f"{where}: info must be a dict")
    return bool(done)


def _check_metadata(env: Any) -> None:
    metadata = env.metadata
    _require(isinstance(metadata, dict), "metadata must be a dict")
    metadata["__probe__"] = 1
    _require("__probe__" not in env.metadata, "metadata must return a copy")


async def _expect_state_error(call: Any, what: str) -> None:
    try:
        await call
    except RuntimeError:
        return
    except Exception as exc:
        raise EnvConformanceError(f"{what} must raise RuntimeError, raised {exc!r}") from exc
    raise EnvConformanceError(f"{what} must raise RuntimeError, but it returned")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise EnvConformanceError(message)
