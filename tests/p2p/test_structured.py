"""The structured author (issue 38): the term catalog holds against the env specs and the
real environments, proposals compile to reward code that validates and trains, the model's
ranking orders the objectives a session tries, and the check decides. A scripted ranker
stands in for the model in the fast tests; the last test runs the embedded model, the
sandbox and real PPO."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError, LLMError
from langmarl.llm import LLMClient, LLMConfig
from langmarl.p2p.design.catalog import (
    CATALOG,
    OBJECTIVES,
    compile_for_env,
    objective_proposal,
    objectives,
)
from langmarl.p2p.design.proposals import Component, Proposal
from langmarl.p2p.design.structured import rank_objectives
from langmarl.p2p.reward.env_specs import ENV_SPECS
from langmarl.p2p.reward.validation import check_static, validate_reward_code
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.testing import ScriptedLLM

from .test_loop_checks import BACKWARDS, Velocities, check_file, judged
from .test_loop_checks import _run as _run_cheetah


def test_every_session_env_has_a_catalog_whose_reads_match_its_spec() -> None:
    assert set(CATALOG) == set(ENV_SPECS) == set(OBJECTIVES)
    for env_id, entries in CATALOG.items():
        spec = ENV_SPECS[env_id]
        for quantity in entries:
            for key in re.findall(r'info\["(\w+)"\]', quantity.expression):
                assert key in spec.info_keys, (env_id, quantity.name, key)
            for index in re.findall(r"next_obs\[(\d+)", quantity.expression):
                assert int(index) < spec.obs_dim, (env_id, quantity.name)
        names = {q.name for q in entries}
        for objective in objectives(env_id):
            proposal = objective_proposal(env_id, objective)
            assert {c.quantity for c in proposal.components} <= names


@pytest.mark.parametrize("env_id", sorted(CATALOG))
def test_every_quantity_reads_in_the_real_env_and_every_objective_compiles(env_id: str) -> None:
    """In the sandbox, on real steps of the env, a reward reading every quantity of the
    catalog gives a finite number for each; each objective compiles to code that passes the
    static checks."""
    every = Proposal(env_id=env_id, components=[
        Component(q.name, "constant" if q.name == "alive" else "linear", 1.0)
        for q in CATALOG[env_id]
    ])  # fmt: skip
    result = validate_reward_code(compile_for_env(every), env_id)
    assert result.ok, (env_id, result.message())
    assert set(result.terms) == {c.term for c in every.components}
    for objective in objectives(env_id):
        proposal = objective_proposal(env_id, objective)
        assert check_static(compile_for_env(proposal)).ok, (env_id, objective.name)


def test_a_proposal_the_catalog_cannot_compile_names_each_problem() -> None:
    bad = Proposal(
        env_id="Hopper-v5",
        components=[
            Component("x_speed", "linear", 1.0),
            Component("torso_angle", "abs", -1.0),
            Component("healthy", "constant", 1.0),
            Component("control", "linear", -0.1),
            Component("control", "linear", -0.2),
        ],
    )
    with pytest.raises(ConfigError) as raised:
        compile_for_env(bad)
    message = str(raised.value)
    for problem in ("components[0].quantity 'x_speed' is not in Hopper-v5's catalog",
                    "components[1]: a abs term is a penalty: give a weight >= 0",
                    "components[2]: a constant term is the per-step bonus: quantity 'alive'",
                    "components[4]: a second linear term on 'control'"):  # fmt: skip
        assert problem in message, message
    with pytest.raises(ValueError, match="finite"):
        Component("x_velocity", "linear", float("nan"))


def test_a_compiled_reward_computes_what_its_proposal_says() -> None:
    import numpy as np

    proposal = Proposal(
        env_id="HalfCheetah-v5",
        components=[
            Component("x_velocity", "linear", -1.0),
            Component("torso_angle", "square", 2.0, target=0.1),
            Component("alive", "constant", 0.5),
            Component("control", "linear", -0.1),
        ],
    )
    namespace: dict = {"np": np}
    exec(compile_for_env(proposal), namespace)  # our own compiled code, not a model's
    next_obs = np.zeros(17)
    next_obs[1] = 0.3
    total, terms = namespace["reward_fn"](None, np.array([1.0, 2.0]), next_obs, {"x_velocity": 1.5})
    assert terms == pytest.approx(
        {"x_velocity": -1.5, "torso_angle_off2": -2 * 0.2**2, "alive": 0.5, "control": -0.5}
    )
    assert total == pytest.approx(sum(terms.values()))


class Ranker:
    """A scripted model that ranks by a table of phrase -> log-probability."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table, self.prefixes = table, []

    def __call__(self, prefix: str, options: list[str]) -> list[float]:
        self.prefixes.append(prefix)
        return [self.table.get(option, -9.0) for option in options]


def ranking_llm(table: dict[str, float], score: str = "SCORE: 0.1") -> LLMClient:
    llm = ScriptedLLM(judged([score]))
    llm.backend.option_logprobs = Ranker(table)  # type: ignore[attr-defined]
    return llm


def test_the_session_trains_the_objectives_in_the_models_order_and_the_check_decides(
    tmp_path: Path,
) -> None:
    llm = ranking_llm({" move backwards.": -1.0, " stay still and not move.": -2.0})
    trainer = Velocities([-0.3, 0.0, -0.9])
    result, _, session = _run_cheetah(tmp_path / "runs", llm, trainer=trainer,
                                      check=check_file(tmp_path), pass_threshold=0.95)  # fmt: skip
    assert result.objectives == ["backward", "still", "forward"]
    assert [s.reward_origin for s in result.iterations] == ["structured"] * 3
    proposals = [session.iteration(n).read_inputs().spec.proposal for n in (1, 2, 3)]
    assert [p["objective"] for p in proposals if p] == ["backward", "still", "forward"]
    assert '-1.0 * float(info["x_velocity"])' in trainer.calls[0][0]  # the compiled code
    assert llm.backend.option_logprobs.prefixes == [  # type: ignore[attr-defined]
        "Intent: balance\nSo the robot should"
    ]  # ranked once, kept in the history
    assert result.best_iteration == 3  # by the check, whatever the ranking said


def test_a_model_that_cannot_rank_gets_the_free_form_author_and_structured_needs_one(
    tmp_path: Path,
) -> None:
    plain = ScriptedLLM(judged(["SCORE: 0.9"]))
    result, _, _ = _run_cheetah(tmp_path / "a", plain, trainer=Velocities([-0.9]),
                                check=check_file(tmp_path, BACKWARDS))  # fmt: skip
    assert result.objectives == [] and result.iterations[0].reward_origin == "author"
    forced = ScriptedLLM(judged(["SCORE: 0.9"]))
    result, _, _ = _run_cheetah(tmp_path / "b", forced, trainer=Velocities([-0.9]),
                                author="structured")  # fmt: skip
    assert result.status == "error" and "no log-probabilities of given text" in (result.error or "")


@pytest.mark.slow
def test_the_embedded_model_ranks_through_the_engine_as_fp32_does() -> None:
    """w16 (the default engine) against fp32 on this machine: the same order, and scores
    within 0.05 nats (fp16 weights move each logit's last bits)."""
    prefix, options = (
        "Intent: make the cheetah run backwards\nSo the robot should",
        [" move forward.", " move backwards.", " stay still and not move."],
    )
    default = LLMClient(LLMConfig.from_preset("local"))
    fp32 = LLMClient(LLMConfig.from_preset("local").with_overrides(
        extra_params={"engine": "transformers"}))  # fmt: skip
    ours, reference = (
        default.option_logprobs(prefix, options),
        fp32.option_logprobs(prefix, options),
    )
    assert ours == pytest.approx(reference, abs=0.05)
    assert sorted(range(3), key=lambda i: -ours[i]) == sorted(range(3), key=lambda i: -reference[i])
    assert all(-20 < s < 0 for s in ours)
    with pytest.raises(LLMError, match="option 1 is empty"):
        default.option_logprobs(prefix, [" move.", ""])


@pytest.mark.slow
def test_a_structured_session_on_the_embedded_model_trains_and_is_checked(tmp_path: Path) -> None:
    """The embedded model ranks the cheetah's objectives, the compiled rewards of its first
    two validate and train in the sandbox (real PPO, a tiny budget, at once when two cores
    are free), the check scores each candidate and the baseline (the env's own reward at the
    same budget) and keeps the best. One iteration: the next one's variants are the search's
    (``tests/p2p/test_search.py``), asked nothing of the model, and train the same way."""
    llm = LLMClient(LLMConfig.from_preset("local"), role="p2p")
    config = LoopConfig(
        env_id="HalfCheetah-v5", max_iterations=1, pass_threshold=1.0, total_timesteps=128,
        elaborate=False, review=False, code_judge=False, summary_judge=False, analyze=False,
        check=check_file(tmp_path), baseline=True,
        train={"num_steps": 128, "n_epochs": 1, "num_evals": 1,
        "eval_episodes": 2, "max_episode_steps": 50, "record_video": False},
    )  # fmt: skip
    result = run_loop("make the cheetah run backwards", config, llm=llm, runs_dir=tmp_path)
    assert result.status == "max_iterations", result.error
    ranked = [o.name for o, _ in rank_objectives(llm, "make the cheetah run backwards",
                                                  "HalfCheetah-v5")]  # fmt: skip
    assert result.objectives == ranked  # the order the model gives on this machine
    (step,) = result.iterations  # two candidates (the default), the best kept
    assert [c.proposal.split(":")[0] for c in step.candidates] == ranked[:2]
    assert [c.origin for c in step.candidates] == ["structured", "structured"]
    assert step.interval is not None and step.interval.n == 2  # the check's, per episode
    assert step.intent_score is not None and 0.0 <= step.intent_score <= 1.0
    assert [c.judged and c.error is None for c in step.candidates] == [True, True]
    assert step.intent_score == max(c.score or 0.0 for c in step.candidates)
    assert result.ppo_steps == 2 * 128  # one rollout each
    assert result.scored_by == "check" and result.best_iteration == 1
    baseline = result.baseline  # the env's own reward, trained and checked alike
    assert baseline is not None and baseline.interval is not None and baseline.interval.n == 2
