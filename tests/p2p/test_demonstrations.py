"""Demonstrations for a model that writes reward code (issue 38): verified rewards of other
envs that read only what the session's env has, the most similar intent shown last (nearest
the request); a close copy is recorded as adapted (origin ``demonstration``); a reward a
session's check passed joins the library of its runs directory. A scripted model stands in
for the fast tests; the last test sends the embedded model's real request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.llm import LLMClient, LLMConfig
from langmarl.llm.types import ChatRequest
from langmarl.p2p.design import demonstrations
from langmarl.p2p.reward.env_specs import ENV_SPECS, get_env_spec
from langmarl.p2p.reward.validation import check_static, validate_reward_code
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.testing import ScriptedLLM

from .conftest import FakeTrainer
from .test_loop import validator
from .test_loop_checks import Velocities, check_file, judged

BACKWARDS = "make the cheetah run backwards"


def _run_cheetah(runs: Path, llm: ScriptedLLM, trainer: Velocities, **config):
    settings = {"env_id": "HalfCheetah-v5", "code_judge": False, "candidates": 1, **config}
    result = run_loop(BACKWARDS, LoopConfig(**settings), llm=llm, runs_dir=runs,
                      validator=validator, trainer=trainer)  # fmt: skip
    return result, trainer, runs / result.session_id


def test_every_catalog_demonstration_passes_the_checks_on_its_env() -> None:
    """Each is an objective's compiled reward: statically sound and fitting its env here;
    tests/p2p/test_structured.py reads every catalog quantity in each real env (sandboxed),
    and one demonstration per body runs through the sandbox's validation below."""
    found = demonstrations.catalog_demos()
    assert {d.env_id for d in found} == set(ENV_SPECS)
    for demo in found:
        assert demonstrations.fits(demo.code, get_env_spec(demo.env_id)), demo.intent
        assert check_static(demo.code).ok, demo.intent
    for env_id in ("HalfCheetah-v5", "Hopper-v5", "Swimmer-v5"):
        demo = next(d for d in found if d.env_id == env_id)
        assert validate_reward_code(demo.code, demo.env_id).ok, demo.intent


def test_choose_takes_other_envs_that_fit_the_most_similar_first() -> None:
    shown = demonstrations.choose("make the cheetah run backwards", "HalfCheetah-v5", 2)
    assert shown[0].intent == "make the swimmer move backwards"
    assert all(d.env_id != "HalfCheetah-v5" for d in shown)
    cheetah = get_env_spec("HalfCheetah-v5")
    assert all(demonstrations.fits(d.code, cheetah) for d in shown)  # no reward_survive
    hopper = [d for d in demonstrations.catalog_demos() if d.env_id == "Hopper-v5"]
    assert not any(demonstrations.fits(d.code, cheetah) for d in hopper)
    assert demonstrations.choose("keep the pole balanced", "HalfCheetah-v5", 0) == []


def copying_llm(seen: list[list[dict]]) -> ScriptedLLM:
    """A model that copies the turn nearest the request, as the embedded one does."""
    scored = judged(["SCORE: 0.1"])

    def reply(request: ChatRequest) -> str:
        answers = [m for m in request.messages if m["role"] == "assistant"]
        if not answers:
            return scored(request)
        seen.append(list(request.messages))
        return str(answers[-1]["content"])

    return ScriptedLLM(reply)


def test_the_author_sees_demonstrations_as_turns_and_a_copy_is_adapted(tmp_path: Path) -> None:
    seen: list[list[dict]] = []
    result, trainer, _ = _run_cheetah(
        tmp_path / "runs", copying_llm(seen), trainer=Velocities([-0.9]), author="free_form",
        check=check_file(tmp_path), max_iterations=1, review=False,
    )  # fmt: skip
    (request,) = seen
    assert [m["role"] for m in request] == ["system", "user", "assistant", "user", "assistant",
                                            "user"]  # fmt: skip
    assert "make the swimmer move backwards" in request[3]["content"]  # the most similar last
    assert f"Behaviour wanted: {BACKWARDS}" in request[-1]["content"]
    assert result.iterations[0].reward_origin == "demonstration"
    assert '-1.0 * float(info["x_velocity"])' in trainer.calls[0][0]  # the copy trained
    # the check passed it: it joins the demonstrations of this runs directory
    (row,) = [json.loads(line) for line in (tmp_path / "runs" / "demonstrations.jsonl").open()]
    assert (row["env_id"], row["source"]) == ("HalfCheetah-v5", result.session_id)
    later = demonstrations.choose(BACKWARDS, "HalfCheetah-v5", 8, tmp_path / "runs")
    assert any(d.source == result.session_id for d in later)  # same env: checked on this body
    assert not demonstrations.accept(tmp_path / "runs", BACKWARDS, "HalfCheetah-v5",
                                     row["code"], "again")  # fmt: skip


def test_without_demonstrations_the_author_gets_one_request(tmp_path: Path) -> None:
    seen: list[list[dict]] = []
    result, _, _ = _run_cheetah(
        tmp_path / "runs", copying_llm(seen), trainer=Velocities([-0.9]), author="free_form",
        demonstrations=0, max_iterations=1, review=False,
    )  # fmt: skip
    assert seen == [] and result.iterations[0].reward_origin == "author"


@pytest.mark.slow
def test_the_embedded_model_writes_after_real_demonstrations(tmp_path: Path) -> None:
    """The real request on the embedded model: two verified rewards of other envs as earlier
    turns. What it writes depends on the CPU's kernels, so the test holds the loop to the
    rules, not to an answer: an honest origin, and a copy recorded as one. Its reward is
    validated in the sandbox; the training is a fake's (real PPO: test_loop_embedded.py)."""
    llm = LLMClient(LLMConfig.from_preset("local"), role="p2p")
    seen: list[list[dict]] = []
    original = llm.complete

    def complete(messages, **options):  # type: ignore[no-untyped-def]
        seen.append(messages)
        return original(messages, **options)

    llm.complete = complete  # type: ignore[method-assign]
    config = LoopConfig(
        env_id="Swimmer-v5", author="free_form", max_iterations=1, candidates=1,
        elaborate=False, review=False, code_judge=False, summary_judge=False, analyze=False,
        max_fix_attempts=0,
    )  # fmt: skip
    result = run_loop("make the swimmer swim backwards", config, llm=llm, runs_dir=tmp_path,
                      trainer=FakeTrainer())  # fmt: skip
    assert result.status in ("max_iterations", "passed"), result.error
    (request,) = seen
    assert [m["role"] for m in request][1:5] == ["user", "assistant", "user", "assistant"]
    shown = demonstrations.choose("make the swimmer swim backwards", "Swimmer-v5", 2)
    assert shown[0].intent in request[3]["content"]
    step = result.iterations[0]
    assert step.reward_origin in ("demonstration", "author", "fallback")
    code = (tmp_path / result.session_id / "iter_1" / "reward_fn.py").read_text()
    assert (demonstrations.adapted_from(code, shown) is not None) == (
        step.reward_origin == "demonstration"
    )
