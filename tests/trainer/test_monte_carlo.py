"""MonteCarloTrainer with a scripted LLM: phases, stats, resume, faults."""

from pathlib import Path
from typing import Any

import pytest
from trainer_fakes import AGENTS, count_peaks, default_reply, make_parts, role_of

from langmarl.core.errors import LLMError, RunFailedError
from langmarl.store import LocalStore
from langmarl.trainer import Callback, EarlyStoppingCallback, MonteCarloTrainer


class Recorder(Callback):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def on_iteration_start(self, iteration: int, trainer: Any) -> None:
        self.calls.append(f"start{iteration}")

    def on_iteration_end(self, iteration: int, stats: dict, trainer: Any) -> None:
        self.calls.append(f"end{iteration}")

    def on_episode_complete(self, trajectory: Any, trainer: Any) -> None:
        self.calls.append("episode")

    def on_policy_update(self, agent_id: str, old: str, new: str) -> None:
        self.calls.append(f"update:{agent_id}")


def test_two_iterations_end_to_end(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path)
    recorder = Recorder()
    trainer = MonteCarloTrainer(cfg, env, critic, opt, callbacks=[recorder])
    metrics = trainer.train()
    assert [m["iteration"] for m in metrics] == [0, 1]
    stats = metrics[0]
    assert stats["num_episodes"] == 3 and stats["avg_reward"] == 1.0
    by_role = stats["usage_by_role"]
    # K·N actor + K critic + K·N gradient + N aggregation + N rewrite, and validation:
    # V episodes of the current team + V per agent's candidate, N actor calls each
    assert stats["validation_episodes"] == 4 + 2 * 4 and stats["accepted_updates"] == 2
    assert by_role["actor"]["calls"] == 6 + 12 * 2 and by_role["critic"]["calls"] == 3
    assert by_role["optimizer"]["calls"] == 6 + 2 + 2
    assert stats["total_tokens"] == sum(r["total_tokens"] for r in by_role.values())
    assert stats["policy_updates"] == {"drafter": "rewrite", "finisher": "rewrite"}
    assert recorder.calls.count("episode") == 6 and "update:finisher" in recorder.calls
    assert recorder.calls[0] == "start0" and recorder.calls[-1] == "end1"
    info = trainer.store.run_info("test")
    assert info["status"] == "completed" and info["completed_iterations"] == 2
    policies = trainer.checkpoint.get_policies()
    assert list(policies) == AGENTS and "Always answer yes" in policies["drafter"]
    run = tmp_path / "runs" / "test"
    assert (run / "evaluations/iter_0001/ep_0002.json").exists()
    assert (run / "gradients/iter_0000/aggregated.json").exists()


def test_training_again_resumes_and_does_not_repeat(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path)
    MonteCarloTrainer(cfg, env, critic, opt).train(1)
    calls_before = len(env.llm.backend.requests)
    metrics = MonteCarloTrainer(cfg, env, critic, opt).train(2)
    assert [m["iteration"] for m in metrics] == [0, 1]
    assert len(env.llm.backend.requests) - calls_before == 6 + 3 + 10  # one iteration only
    MonteCarloTrainer(cfg, env, critic, opt).train(2)  # nothing left to do
    assert len(env.llm.backend.requests) - calls_before == 19


def test_central_global_uses_shared_gradients(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, paradigm="central_global", num_iterations=1)
    stats = MonteCarloTrainer(cfg, env, critic, opt).train()[0]
    # K shared gradients + 1 aggregation + N rewrites
    assert stats["usage_by_role"]["optimizer"]["calls"] == 3 + 1 + 2
    assert stats["paradigm"] == "central_global"


def test_mini_batch_limits_evaluations(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, mini_batch_size=2, num_iterations=1)
    stats = MonteCarloTrainer(cfg, env, critic, opt).train()[0]
    assert stats["num_episodes"] == 3 and stats["evaluated_episodes"] == 2
    assert stats["usage_by_role"]["critic"]["calls"] == 2


def test_faults_are_recorded_not_fatal(tmp_path: Path) -> None:
    def reply(request: Any) -> Any:
        role = role_of(request)
        if role == "critic":
            return "the team was fine"  # unparseable: fallback
        if role in ("rewrite", "aggregate"):
            return LLMError("scripted", "m", "optimizer down")
        return default_reply(request)

    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train()[0]
    assert stats["critic_fallbacks"] == 3
    assert stats["policy_updates"] == {"drafter": "append", "finisher": "append"}
    assert stats["llm_failures"] == 4  # 2 aggregations + 2 rewrites, after retries
    policy = trainer.checkpoint.get_policies()["drafter"]
    assert "[CASE-SPECIFIC FEEDBACK]" in policy


def test_an_optimizer_that_always_crashes_fails_the_run_and_keeps_the_policies(
    tmp_path: Path,
) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=1)

    async def broken(*args: Any) -> Any:
        raise RuntimeError("bug in optimizer")

    opt.aupdate_policy = broken  # type: ignore[method-assign]
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    before = env.default_policies()
    with pytest.raises(RunFailedError, match="2 of 2 policy updates failed"):
        trainer.train()
    assert trainer.checkpoint.iterations() == [0]  # the failed iteration is not checkpointed
    assert trainer.checkpoint.get_policies() == before
    info = trainer.store.run_info("test")
    assert info["status"] == "failed" and "bug in optimizer" in info["error"]
    events = LocalStore(tmp_path / "runs").read_events("test", "logs/events.jsonl")
    assert any("bug in optimizer" in e.get("message", "") for e in events)


def test_every_episode_failing_fails_the_run(tmp_path: Path) -> None:
    def reply(request: Any) -> Any:
        if role_of(request) == "actor":
            return LLMError("scripted", "m", "actor down")
        return default_reply(request)

    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    with pytest.raises(RunFailedError, match=r"3 of 3 episodes failed .*actor down"):
        trainer.train()
    assert trainer.store.run_info("test")["status"] == "failed"
    assert trainer.checkpoint.iterations() == [0]


def test_a_few_failed_episodes_are_tolerated_and_shown(tmp_path: Path) -> None:
    failed: list[str] = []

    def reply(request: Any) -> Any:
        if role_of(request) == "actor" and not failed:
            failed.append("once")
            return LLMError("scripted", "m", "actor down")
        return default_reply(request)

    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train()[0]
    assert stats["failed_episodes"] == 1 and stats["evaluated_episodes"] == 2
    assert trainer.store.run_info("test")["status"] == "completed"


def test_early_stopping_stops_the_run_with_a_reason(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=6)
    stopper = EarlyStoppingCallback(patience=2, min_delta=0.01)
    trainer = MonteCarloTrainer(cfg, env, critic, opt, callbacks=[stopper])
    metrics = trainer.train()
    # the reward is 1.0 from the first iteration on: iterations 1 and 2 do not improve it
    assert [m["iteration"] for m in metrics] == [0, 1, 2]
    info = trainer.store.run_info("test")
    assert info["status"] == "stopped" and "early stopping" in info["error"]
    # training again resumes with the history read back: one more flat iteration stops it
    metrics = MonteCarloTrainer(cfg, env, critic, opt, callbacks=[stopper]).train()
    assert len(metrics) == 4


def test_train_one_iteration_on_a_fresh_trainer_opens_the_run(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=3)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train_one_iteration(0)
    for key in ("paradigm", "num_episodes", "avg_reward", "min_reward", "max_reward", "rewards"):
        assert key in stats
    assert stats["num_episodes"] == 3 and stats["cost_usd"] == 0.0
    assert stats["input_tokens"] + stats["output_tokens"] == stats["total_tokens"] > 0
    assert trainer.checkpoint.latest_iteration() == 1
    info = trainer.store.run_info("test")
    assert info["status"] == "stopped" and info["completed_iterations"] == 1
    assert trainer.train_one_iteration(1)["iteration"] == 1
    assert trainer.train()[-1]["iteration"] == 2
    assert trainer.store.run_info("test")["status"] == "completed"


def test_calls_within_a_phase_run_concurrently(tmp_path: Path) -> None:
    # every call waits 50 ms, so calls launched together overlap; a serial phase peaks at 1
    cfg, env, critic, opt = make_parts(
        tmp_path,
        latency=0.05,
        num_iterations=1,
        trajectories_per_iteration=6,
        episode_generation_workers=6,
        max_workers=6,
        optimizer_workers=12,
    )
    peaks = count_peaks(env.llm.backend)
    MonteCarloTrainer(cfg, env, critic, opt).train()
    assert peaks["actor"] == 6  # six episodes at once, each agent acting in turn
    assert peaks["critic"] == 6  # one critic call per episode, all at once
    # 6 episodes x 2 agents = 12 gradients within optimizer_workers, as many as the endpoint
    # takes at once (LLMConfig.max_concurrency)
    assert peaks["gradient"] == min(12, env.llm.config.max_concurrency)
    assert peaks["aggregate"] == 2 and peaks["rewrite"] == 2  # both agents at once


def test_episode_worker_limit_bounds_concurrent_episodes(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(
        tmp_path,
        latency=0.05,
        num_iterations=1,
        trajectories_per_iteration=6,
        episode_generation_workers=2,
    )
    peaks = count_peaks(env.llm.backend)
    MonteCarloTrainer(cfg, env, critic, opt, callbacks=[]).train()
    assert peaks["actor"] == 2  # two episodes at a time, each agent acting in turn


def test_a_resume_with_a_changed_config_keeps_the_earlier_one(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=1)
    MonteCarloTrainer(cfg, env, critic, opt).train()
    store = LocalStore(tmp_path / "runs")
    assert store.read_events("test", "config_history.jsonl") == []
    MonteCarloTrainer(cfg, env, critic, opt).train()  # same config: nothing recorded
    assert store.read_events("test", "config_history.jsonl") == []
    changed = cfg.model_copy(update={"num_iterations": 2, "mini_batch_size": 2})
    MonteCarloTrainer(changed, env, critic, opt).train()
    history = store.read_events("test", "config_history.jsonl")
    assert len(history) == 1 and history[0]["num_iterations"] == 1
    assert store.read_json("test", "config.json")["num_iterations"] == 2
    log = (tmp_path / "runs" / "test" / "logs" / "run.log").read_text()
    assert "config changed on resume: mini_batch_size, num_iterations" in log


def test_on_train_end_gets_the_runs_final_status(tmp_path: Path) -> None:
    class EndStatus(Callback):
        def __init__(self) -> None:
            self.statuses: list[str] = []

        def on_train_end(self, status: str, trainer: Any) -> None:
            self.statuses.append(status)

    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=1)
    ends = EndStatus()
    MonteCarloTrainer(cfg, env, critic, opt, callbacks=[ends]).train()

    async def broken(*args: Any) -> Any:
        raise RuntimeError("env bug")

    env.acollect_trajectory = broken  # type: ignore[method-assign]
    trainer = MonteCarloTrainer(cfg, env, critic, opt, callbacks=[ends])
    with pytest.raises(RuntimeError, match="env bug"):
        trainer.train(2)
    assert ends.statuses == ["completed", "failed"]
    assert trainer.store.run_info("test")["status"] == "failed"
