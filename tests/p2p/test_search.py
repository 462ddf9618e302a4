"""The search of issue 38 (``LoopConfig.candidates``): K candidates per iteration, each
trained, the check keeps the best and the next iteration's proposals read every
candidate's numbers; random search as the control; a search killed mid-iteration resumes
without losing a candidate. A scripted ranker stands in for the model and a fake trainer
for PPO (its episodes move at a speed set by the reward's code); the check runs in the
real sandbox."""

from __future__ import annotations

import random
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from langmarl.p2p import SessionRecord
from langmarl.p2p.design import candidates, search
from langmarl.p2p.design.catalog import compile_for_env, objective_proposal, objectives
from langmarl.p2p.design.proposals import Proposal
from langmarl.p2p.learner.evaluation import Episode, save_trajectories
from langmarl.p2p.reward.validation import check_static, validate_reward_code

from .conftest import FakeTrainer
from .test_loop_checks import _run as _run_cheetah
from .test_loop_checks import check_file
from .test_session_resume import Killed, _resume
from .test_structured import ranking_llm

RANKS = {" move backwards.": -1.0, " stay still and not move.": -2.0}


class BySource(FakeTrainer):
    """A FakeTrainer whose episodes move backwards at the x velocity weight the reward's
    code gives (``-3.0 * float(info["x_velocity"])`` -> 0.9 m/s: 0.3 per unit, up to 1),
    and forward for any other reward; it dies (SIGKILL's stand-in) on call ``kill_on``."""

    def __init__(self, kill_on: int = 0) -> None:
        super().__init__()
        self.kill_on = kill_on

    def __call__(self, it, reward, configs, seeds):
        source = reward.read_text()
        if len(self.calls) + 1 == self.kill_on:
            self.calls.append((source, configs[0]))
            raise Killed
        aggregation = super().__call__(it, reward, configs, seeds)
        found = re.search(r'-([\d.]+) \* float\(info\["x_velocity"\]\)', source)
        velocity = -min(1.0, 0.3 * float(found.group(1))) if found else 0.5
        episodes = []
        for seed in range(3):
            episode = Episode(seed=seed, obs=[np.zeros(4)] * 4, actions=[np.zeros(1)] * 4)
            episode.rewards = episode.env_rewards = [1.0] * 4
            episode.terms = {"upright": [1.0] * 4}
            episode.infos = {"x_velocity": [velocity] * 4}
            episodes.append(episode)
        save_trajectories(it.path / "trajectory_100.npz", episodes)
        return aggregation


def _search(tmp_path: Path, trainer: BySource, **config):
    tmp_path.mkdir(parents=True, exist_ok=True)
    settings = {"check": check_file(tmp_path), "pass_threshold": 0.95, "max_iterations": 2,
                "candidates": 3, "max_parallel": 1, **config}  # fmt: skip
    return _run_cheetah(tmp_path / "runs", ranking_llm(RANKS), trainer=trainer, **settings)


def test_the_check_keeps_the_best_of_k_candidates_and_variants_of_it_come_next(
    tmp_path: Path,
) -> None:
    trainer = BySource()
    result, _, session = _search(tmp_path, trainer)
    first, second = result.iterations
    assert [c.origin for c in first.candidates] == ["structured"] * 3  # the model's order
    assert [c.proposal.split(":")[0] for c in first.candidates] == ["backward", "still", "forward"]
    assert [c.score for c in first.candidates] == pytest.approx([0.3, 0.0, 0.0])
    assert first.winner == "c_1" and first.intent_score == pytest.approx(0.3)
    it = session.iteration(1)
    kept = it.path / "candidates" / "c_1"
    assert it.read_reward_source() == (kept / "reward_fn.py").read_text()  # the winner's files
    assert (it.path / "trajectory_100.npz").is_file() and it.read_outcome() is not None
    outcome = it.read_outcome()
    assert outcome is not None and "Candidates of this iteration" in outcome.measurements
    assert "- c_1 (kept) backward:" in outcome.measurements
    # 0.3 < half the threshold: the objectives come first, but all three were tried; so the
    # variants of the best: its objective x3 (0.9 m/s) and x1/3
    assert [c.origin for c in second.candidates] == ["variant", "variant"]
    assert [c.proposal.split(":")[0] for c in second.candidates] == ["backward x3", "backward x1/3"]
    assert second.winner == "c_1" and second.intent_score == pytest.approx(0.9)
    assert result.best_iteration == 2 and result.status == "max_iterations"
    assert result.ppo_steps == 5 * 100 and len(trainer.calls) == 5
    events = [e for e in session.run.events() if e["event"] == "checked"]
    assert [e["iteration"] for e in events][:3] == ["iter_1/c_1", "iter_1/c_2", "iter_1/c_3"]
    from langmarl.cli.common import console
    from langmarl.cli.p2p_commands import _report

    with console.capture() as captured:
        _report(result, session.path)
    report = captured.get()
    assert "    c_1 (kept) structured backward: -1 x_velocity, -0.1 control: 0.30" in report
    assert "    c_2 variant backward x1/3:" in report and "c_2 (kept)" not in report
    assert "trained: 5 candidates, 500 PPO steps" in report
    assert "  iter_1: reward=structured score=0.30 return=3.0\n" in report  # rounded


def test_a_candidate_that_fails_to_train_is_recorded_and_the_others_decide(
    tmp_path: Path,
) -> None:
    class FailsOnStill(BySource):
        def __call__(self, it, reward, configs, seeds):
            if "abs(" in reward.read_text():  # the still objective
                self.calls.append((reward.read_text(), configs[0]))
                return FakeTrainer(fail=True)(it, reward, configs, seeds)
            return super().__call__(it, reward, configs, seeds)

    result, _, _ = _search(tmp_path, FailsOnStill(), max_iterations=1)
    (step,) = result.iterations
    assert [c.error is not None for c in step.candidates] == [False, True, False]
    assert "boom" in (step.candidates[1].error or "") and step.winner == "c_1"
    assert result.status == "max_iterations" and result.best_score == pytest.approx(0.3)


def test_a_search_killed_mid_iteration_resumes_and_loses_no_candidate(tmp_path: Path) -> None:
    with pytest.raises(Killed):
        _search(tmp_path, BySource(kill_on=2), max_iterations=1)
    (path,) = (tmp_path / "runs").iterdir()
    session = SessionRecord(path)
    history = session.read_history()
    assert [c["judged"] for c in history["iterations"][0]["candidates"]] == [True, False, False]
    again = BySource()
    result = _resume(session, again, ranking_llm(RANKS))
    (step,) = result.iterations
    assert len(again.calls) == 2  # c_2 and c_3 only: c_1 was judged before the kill
    assert [c.judged for c in step.candidates] == [True, True, True]
    assert step.winner == "c_1" and result.best_score == pytest.approx(0.3)
    assert (session.iteration(1).path / "candidates" / "c_2" / "outcome.json").is_file()


def test_random_search_draws_from_the_catalog_without_the_model(tmp_path: Path) -> None:
    result, _, _ = _search(tmp_path, BySource(), author="random", max_iterations=1)
    (step,) = result.iterations
    assert result.objectives == []  # nothing ranked
    assert [c.origin for c in step.candidates] == ["random"] * 3
    assert all(c.proposal.startswith("random:") for c in step.candidates)
    assert len({c.proposal for c in step.candidates}) == 3


def test_variants_read_the_term_means() -> None:
    hopper = objective_proposal("Hopper-v5", objectives("Hopper-v5")[0])  # forward + shaping
    stood = search.Tried(hopper, {"x_velocity": 0.01, "healthy": 1.0, "control": -0.001}, 0.1)
    found = search.variants(stood)
    assert [p.objective for p in found] == ["forward without healthy", "forward x3", "forward x1/3"]
    assert "healthy" not in {c.quantity for c in found[0].components}
    assert found[1].components[0].weight == 3.0 and found[1].components[1:] == hopper.components[1:]
    ran = search.Tried(hopper, {"x_velocity": 2.0, "healthy": 1.0, "control": -0.01}, 0.5)
    assert [p.objective for p in search.variants(ran)] == ["forward x3", "forward x1/3"]


def test_propose_refines_above_half_the_threshold_and_never_repeats() -> None:
    env = "HalfCheetah-v5"
    by_name = {o.name: objective_proposal(env, o) for o in objectives(env)}
    backward, still, forward = by_name["backward"], by_name["still"], by_name["forward"]
    tried = [search.Tried(backward, {}, 0.5)]
    fresh = iter([backward, still, forward])
    picked = search.propose(3, tried, fresh, threshold=0.8)
    assert [(p.objective, how) for p, how in picked] == [
        ("backward x3", "variant"), ("backward x1/3", "variant"), ("still", "fresh")]  # fmt: skip
    low = search.propose(2, [search.Tried(backward, {}, 0.1)], iter([backward, still]), 0.8)
    assert [(p.objective, how) for p, how in low] == [("still", "fresh"),
                                                       ("backward x3", "variant")]  # fmt: skip


def all_at_once(proposals: list[Proposal]) -> str:
    """One reward that runs each proposal's compiled ``reward_fn`` (renamed) on the same
    step and declares and returns every proposal's terms, prefixed ``p<i>_``: the sandbox's
    check of finite numbers and declared terms holds for each, in one process instead of one
    a proposal. A session validates each on its own (tests/p2p/test_structured.py, the
    structured candidates; tests/p2p/test_session_kill_resume.py, the random ones)."""
    codes = [compile_for_env(p).replace("def reward_fn(", f"def reward_{i}(", 1)
             for i, p in enumerate(proposals)]  # fmt: skip
    declared = "\n".join(f"        p{i}_{c.term}: proposal {i}"
                          for i, p in enumerate(proposals) for c in p.components)  # fmt: skip
    calls = ", ".join(f"reward_{i}" for i in range(len(proposals)))
    return (
        "\n".join(codes)
        + f'''
def reward_fn(obs, action, next_obs, info):
    """Every proposal's reward on one step.
    LaTeX: r = \\\\sum_i r_i
    Terms:
{declared}
    """
    terms = {{}}
    for i, each in enumerate(({calls},)):
        _, own = each(obs, action, next_obs, info)
        terms.update({{f"p{{i}}_{{name}}": value for name, value in own.items()}})
    return float(sum(terms.values())), terms
'''
    )


@pytest.mark.parametrize("env_id", ["HalfCheetah-v5", "Hopper-v5", "InvertedPendulum-v5"])
def test_random_proposals_and_variants_compile_and_validate(env_id: str) -> None:
    rng = random.Random(7)
    drawn = [search.random_proposal(rng, env_id) for _ in range(3)]
    made = search.variants(search.Tried(drawn[0], {}, 0.5))
    proposals = [*drawn, *made]
    for proposal in proposals:
        assert check_static(compile_for_env(proposal)).ok, proposal.describe()
    result = validate_reward_code(all_at_once(proposals), env_id)  # real steps, sandboxed
    assert result.ok, ([p.describe() for p in proposals], result.message())
    assert len(result.terms) == sum(len(p.components) for p in proposals) > len(proposals)


def test_pick_and_slots() -> None:
    from langmarl.p2p.session.contracts import CandidateResult

    listed = [
        CandidateResult(name="c_1", origin="structured", judged=True, score=0.4),
        CandidateResult(name="c_2", origin="structured", judged=True, error="boom"),
        CandidateResult(name="c_3", origin="variant", judged=True, score=0.4),
    ]
    assert candidates.pick(listed).name == "c_1"  # type: ignore[union-attr]  # first best
    unscored = [c.model_copy(update={"score": None}) for c in listed]
    assert candidates.pick(unscored).name == "c_1"  # type: ignore[union-attr]
    assert candidates.pick([listed[1]]) is None
    assert candidates.slots(3, runs_each=1, cores=2, backend="process") == 2
    assert candidates.slots(3, runs_each=3, cores=2, backend="process") == 1
    assert candidates.slots(3, runs_each=3, cores=2, backend="ray") == 3


def test_candidates_train_at_once_when_the_cores_allow(tmp_path: Path) -> None:
    """With three cores for three one-run candidates, the three calls meet at a barrier
    (one after the other, the barrier would break); a kill in one stops the others."""
    barrier = threading.Barrier(3, timeout=60)

    class AtOnce(BySource):
        interrupted = 0

        def __call__(self, it, reward, configs, seeds):
            barrier.wait()
            return super().__call__(it, reward, configs, seeds)

        def interrupt(self) -> None:
            self.interrupted += 1

    trainer = AtOnce()
    result, _, _ = _search(tmp_path / "a", trainer, max_iterations=1, max_parallel=3)
    assert [c.judged for c in result.iterations[0].candidates] == [True] * 3
    assert trainer.interrupted == 0
    barrier.reset()
    dying = AtOnce(kill_on=1)
    with pytest.raises(Killed):
        _search(tmp_path / "b", dying, max_iterations=1, max_parallel=3)
    assert dying.interrupted == 1


def test_a_history_from_before_the_search_counts_its_iterations_as_tried(tmp_path: Path) -> None:
    from langmarl.p2p.session.contracts import LoopResult

    _, _, session = _search(tmp_path, BySource(), candidates=1, max_iterations=1)
    result = LoopResult.model_validate(session.read_history())
    for step in result.iterations:  # as a session written before the search lists them
        step.candidates, step.winner = [], None
    (tried,) = candidates.tried(session, result)
    assert tried.proposal.objective == "backward" and tried.score == pytest.approx(0.3)


def test_a_ppo_budget_ends_the_search_before_it_is_overspent(tmp_path: Path) -> None:
    """Iteration 1's 3 candidates train 300 steps; a budget of 400 leaves no room for
    iteration 2's (2 x 100): the session ends there and says why."""
    result, _, _ = _search(tmp_path, BySource(), ppo_budget=400, max_iterations=3,
                           total_timesteps=100)  # fmt: skip
    assert [len(s.candidates) for s in result.iterations] == [3]
    assert result.status == "max_iterations" and result.ppo_steps == 300
    assert "the PPO budget is spent: 300 of 400 steps" in (result.error or "")
    from langmarl.core.errors import ConfigError
    from langmarl.p2p.session.config import validate_loop_config

    with pytest.raises(ConfigError, match="ppo_budget"):
        validate_loop_config({"ppo_budget": 10, "total_timesteps": 100})
