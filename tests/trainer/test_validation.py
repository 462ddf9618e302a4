"""Validated updates with a scripted LLM: harmful rewrites rejected, better ones kept, the
best-so-far policies in checkpoints (also after a resume), every decision recorded."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from trainer_fakes import default_reply, make_parts, role_of

from langmarl.config import LanguageTaskConfig
from langmarl.core.errors import ConfigError
from langmarl.envs.language.env import LanguageEnv
from langmarl.llm.types import ChatRequest, message_text
from langmarl.store import LocalStore
from langmarl.testing import ScriptedLLM
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import Callback, CheckpointCallback, MonteCarloTrainer

DRAFT = "You draft the reply in a few words."
GOOD = "You finish the task: always say YES."
BAD = "You finish the task quietly, in few words."
HARMFUL = "You finish the task: always answer NO."


def says_yes_unless_no(system: str) -> str:
    return "no" if "NO" in system else "yes"


def says_yes_only_if_told(system: str) -> str:
    return "yes" if "YES" in system else "maybe"


def team_reply(
    actor: Callable[[str], str], finisher_rewrites: list[str], drafter_rewrite: str = DRAFT
) -> Any:
    """Actors answer by ``actor(policy)``; the finisher's rewrites come from
    ``finisher_rewrites`` in order (the last one repeats), the drafter's is fixed."""
    queue = list(finisher_rewrites)

    def reply(request: ChatRequest) -> Any:
        role = role_of(request)
        if role == "actor":
            return actor(message_text(request.messages[0]))
        if role == "rewrite":
            if "Agent: finisher" not in message_text(request.messages[-1]):
                return drafter_rewrite
            return queue.pop(0) if len(queue) > 1 else queue[0]
        return default_reply(request)

    return reply


def decisions(tmp_path: Path) -> list[dict[str, Any]]:
    return LocalStore(tmp_path / "runs").load_update_decisions("test")


def test_a_harmful_rewrite_is_rejected_and_recorded(tmp_path: Path) -> None:
    reply = team_reply(says_yes_unless_no, [HARMFUL])
    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train()[0]
    # the drafter's rewrite does not change the reward: a tie is accepted
    assert stats["policy_updates"] == {"drafter": "rewrite", "finisher": "kept"}
    assert stats["accepted_updates"] == 1 and stats["rejected_updates"] == 1
    assert stats["validation_score"] == 1.0
    policies = trainer.checkpoint.get_policies(1)
    assert policies["drafter"] == DRAFT
    assert policies["finisher"] == env.default_policies()["finisher"]
    drafter, finisher = decisions(tmp_path)
    assert drafter["agent_id"] == "drafter" and drafter["accepted"] is True
    assert drafter["reason"] == "scored 1.000 >= current 1.000"
    assert finisher == {
        "iteration": 0,
        "agent_id": "finisher",
        "candidate": 0,
        "kind": "rewrite",
        "policy": HARMFUL,
        "score": 0.0,
        "incumbent_score": 1.0,
        "accepted": False,
        "reason": "scored 0.000 < current 1.000",
        "error": None,
    }
    manifest = trainer.checkpoint.manifest(1)
    kept = next(u for u in manifest["updates"] if u["agent_id"] == "finisher")
    assert "scored 0.000 < current 1.000" in kept["error"]


def test_a_better_rewrite_is_kept_and_a_worse_one_is_not_even_after_a_resume(
    tmp_path: Path,
) -> None:
    reply = team_reply(says_yes_only_if_told, [GOOD, BAD])
    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=2)
    exports = tmp_path / "exported"
    first = MonteCarloTrainer(cfg, env, critic, opt, callbacks=[CheckpointCallback(exports)])
    metrics = first.train(1)
    assert metrics[0]["avg_reward"] == 0.0 and metrics[0]["validation_score"] == 1.0
    assert first.checkpoint.get_policies(1)["finisher"] == GOOD
    # resumed by a new trainer: the current team's score comes from the run directory
    second = MonteCarloTrainer(cfg, env, critic, opt, callbacks=[CheckpointCallback(exports)])
    metrics = second.train()
    assert [m["validation_score"] for m in metrics] == [1.0, 1.0]
    assert [m["accepted_updates"] for m in metrics] == [2, 0]
    # iteration 1: the drafter's rewrite repeats its policy, only BAD is played
    assert metrics[1]["validation_episodes"] == 4
    assert metrics[1]["avg_reward"] == 1.0  # trained with GOOD
    best = second.checkpoint.get_policies(2)
    assert best == second.checkpoint.get_policies(1) and best["finisher"] == GOOD
    assert (exports / "test" / "finisher.txt").read_text() == GOOD
    last = [d for d in decisions(tmp_path) if d["iteration"] == 1]
    assert [(d["agent_id"], d["accepted"], d["reason"]) for d in last] == [
        ("drafter", False, "identical to the current policy"),
        ("finisher", False, "scored 0.000 < current 1.000"),
    ]


def test_several_candidates_the_best_one_wins(tmp_path: Path) -> None:
    reply = team_reply(says_yes_only_if_told, [BAD, GOOD, "You finish it, and briefly."])
    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1, update_candidates=3)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train()[0]
    assert trainer.checkpoint.get_policies(1)["finisher"] == GOOD
    assert stats["usage_by_role"]["optimizer"]["calls"] == 6 + 2 + 6  # 3 rewrites per agent
    mine = {d["policy"]: d for d in decisions(tmp_path) if d["agent_id"] == "finisher"}
    good = mine.pop(GOOD)
    assert good["accepted"] and good["score"] == 1.0 and good["incumbent_score"] == 0.0
    for other in mine.values():
        assert not other["accepted"] and other["score"] == 0.0
        assert other["reason"] == f"candidate {good['candidate']} scored higher (1.000)"
    drafter = [d for d in decisions(tmp_path) if d["agent_id"] == "drafter"]
    assert [d["reason"] for d in drafter] == [
        "scored 0.000 >= current 0.000",
        "duplicate of candidate 0",
        "duplicate of candidate 0",
    ]


def test_llm_failures_in_validation_are_retried_then_reject_the_candidate(
    tmp_path: Path,
) -> None:
    flaky = "You finish the task: FLAKY, always say YES."
    base = team_reply(says_yes_only_if_told, [flaky])

    def reply(request: ChatRequest) -> Any:
        if role_of(request) == "actor" and "FLAKY" in message_text(request.messages[0]):
            return ConnectionError("endpoint down")
        return base(request)

    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1, retries=1)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train()[0]
    flaky_calls = [r for r in env.llm.backend.requests if "FLAKY" in message_text(r.messages[0])]
    assert len(flaky_calls) == 4 * 2  # 4 validation episodes, each call tried twice
    finisher = next(d for d in decisions(tmp_path) if d["agent_id"] == "finisher")
    assert not finisher["accepted"] and finisher["score"] is None
    assert finisher["reason"].startswith("validation failed: 4 of 4 validation episodes failed")
    assert trainer.checkpoint.get_policies(1)["finisher"] == env.default_policies()["finisher"]
    store = LocalStore(tmp_path / "runs")
    scored = store.load_validation_scores("test")
    assert all(flaky not in str(line) for line in scored)  # failures are not cached
    assert len(scored) == 2  # the current team and the drafter's candidate
    assert stats["validation_score"] == 0.0
    assert store.run_info("test")["status"] == "completed"


def test_when_the_current_team_cannot_be_scored_nothing_is_accepted(tmp_path: Path) -> None:
    down = {"now": False}
    base = team_reply(says_yes_only_if_told, [GOOD])

    def reply(request: ChatRequest) -> Any:
        if down["now"] and role_of(request) == "actor":
            return ConnectionError("endpoint down")
        return base(request)

    class GoDown(Callback):
        def on_phase_start(self, iteration: int, phase: str, total: int) -> None:
            down["now"] = phase == "validate"

    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)
    trainer = MonteCarloTrainer(cfg, env, critic, opt, callbacks=[GoDown()])
    stats = trainer.train()[0]
    assert stats["accepted_updates"] == 0 and stats["validation_score"] is None
    assert trainer.checkpoint.get_policies(1) == env.default_policies()
    finisher = next(d for d in decisions(tmp_path) if d["agent_id"] == "finisher")
    assert finisher["reason"].startswith("the current policies could not be scored")
    assert trainer.store.run_info("test")["status"] == "completed"


def test_a_crash_after_the_decisions_resumes_without_repeating_them(tmp_path: Path) -> None:
    reply = team_reply(says_yes_only_if_told, [GOOD])
    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)

    class Crash(Callback):
        def on_policy_update(self, agent_id: str, old: str, new: str) -> None:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        MonteCarloTrainer(cfg, env, critic, opt, callbacks=[Crash()]).train()
    before = len(env.llm.backend.requests)
    stats = MonteCarloTrainer(cfg, env, critic, opt).train()[0]
    resumed = env.llm.backend.requests[before:]
    assert {role_of(r) for r in resumed} == set()  # candidates and scores were stored
    assert stats["validation_episodes"] == 0 and stats["accepted_updates"] == 2
    assert len(decisions(tmp_path)) == 2  # recorded once
    assert LocalStore(tmp_path / "runs").load_metrics("test")[0]["validation_score"] == 1.0


def test_a_crash_during_validation_resumes_with_the_same_candidates(tmp_path: Path) -> None:
    reply = team_reply(says_yes_only_if_told, [GOOD])
    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)
    original = env.collect_trajectory
    crash = {"armed": True}

    async def collect(policies: dict[str, str], task: dict[str, Any]) -> Any:
        if crash["armed"] and policies["finisher"] == GOOD:
            raise RuntimeError("killed mid-validation")
        return await original(policies, task)

    env.collect_trajectory = collect  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="killed mid-validation"):
        MonteCarloTrainer(cfg, env, critic, opt).train()
    assert decisions(tmp_path) == []
    crash["armed"] = False
    before = len(env.llm.backend.requests)
    stats = MonteCarloTrainer(cfg, env, critic, opt).train()[0]
    roles = [role_of(r) for r in env.llm.backend.requests[before:]]
    assert set(roles) == {"actor"} and len(roles) == 4 * 2  # only the finisher's candidate
    assert stats["validation_episodes"] == 4 and stats["reused_episodes"] == 3
    assert [d["accepted"] for d in decisions(tmp_path)] == [True, True]


def test_rescore_incumbent_plays_the_current_team_every_iteration(tmp_path: Path) -> None:
    reply = team_reply(says_yes_only_if_told, [GOOD])
    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, rescore_incumbent=True)
    metrics = MonteCarloTrainer(cfg, env, critic, opt).train()
    # iteration 1 proposes the policies it has: only the current team is played
    assert [m["validation_episodes"] for m in metrics] == [12, 4]


def test_with_validation_off_every_rewrite_is_accepted(tmp_path: Path) -> None:
    reply = team_reply(says_yes_unless_no, [HARMFUL])
    cfg, env, critic, opt = make_parts(
        tmp_path, reply=reply, num_iterations=1, validate_updates=False
    )
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train()[0]
    assert trainer.checkpoint.get_policies(1)["finisher"] == HARMFUL
    assert stats["validation_score"] is None and stats["validation_episodes"] == 0
    assert stats["accepted_updates"] == 2
    assert stats["usage_by_role"]["actor"]["calls"] == 6  # no validation episodes
    assert {d["reason"] for d in decisions(tmp_path)} == {
        "validate_updates is off: every update is accepted"
    }
    assert LocalStore(tmp_path / "runs").load_validation_scores("test") == []


def test_a_validation_batch_larger_than_the_training_tasks_is_refused(tmp_path: Path) -> None:
    config = LanguageTaskConfig(task_type="qa", validation_size=7, runs_dir=str(tmp_path), seed=0)
    llm = ScriptedLLM(["x"])
    env = LanguageEnv(config, llm=llm)
    assert len(env.splits["train"]) == 6
    critic = CentralizedCritic(config, llm=llm)
    optimizer = PolicyGradientOptimizer(config.get_optimizer_llm(), llm=llm)
    with pytest.raises(ConfigError, match=r"validation_size=7 is larger than the 6 training"):
        MonteCarloTrainer(config, env, critic, optimizer)
    assert not (tmp_path / "experiment").exists()  # refused before the run was opened


def test_candidates_without_validation_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="update_candidates=2 needs validate_updates=true"):
        LanguageTaskConfig.from_dict({"update_candidates": 2, "validate_updates": False})


def test_a_run_with_no_iterations_has_no_decisions(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=0)
    assert MonteCarloTrainer(cfg, env, critic, opt).train() == []
    assert decisions(tmp_path) == []
    assert list(LocalStore(tmp_path / "runs").read_json("test", "validation.json")) == [
        "size",
        "seed",
        "batch",
        "task_ids",
    ]
