"""MonteCarloTrainer with a scripted LLM: phases, stats, resume, faults."""

from pathlib import Path
from typing import Any

from trainer_fakes import AGENTS, default_reply, make_parts, role_of

from langmarl.core.errors import LLMError
from langmarl.store import LocalStore
from langmarl.trainer import Callback, MonteCarloTrainer


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
    # K·N actor + K critic + K·N gradient + N aggregation + N rewrite
    assert by_role["actor"]["calls"] == 6 and by_role["critic"]["calls"] == 3
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


def test_optimizer_crash_keeps_previous_policy(tmp_path: Path) -> None:
    cfg, env, critic, opt = make_parts(tmp_path, num_iterations=1)

    async def broken(*args: Any) -> Any:
        raise RuntimeError("bug in optimizer")

    opt.aupdate_policy = broken  # type: ignore[method-assign]
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    before = env.default_policies()
    stats = trainer.train()[0]
    assert stats["policy_updates"] == {"drafter": "kept", "finisher": "kept"}
    assert trainer.checkpoint.get_policies() == before
    events = LocalStore(tmp_path / "runs").read_events("test", "logs/events.jsonl")
    assert any("bug in optimizer" in e.get("message", "") for e in events)


def test_actor_failure_becomes_a_failed_episode(tmp_path: Path) -> None:
    def reply(request: Any) -> Any:
        if role_of(request) == "actor" and "word" in str(request.messages[-1]):
            return LLMError("scripted", "m", "actor down")
        return default_reply(request)

    cfg, env, critic, opt = make_parts(tmp_path, reply=reply, num_iterations=1)
    trainer = MonteCarloTrainer(cfg, env, critic, opt)
    stats = trainer.train()[0]
    assert stats["failed_episodes"] == 3 and stats["evaluated_episodes"] == 0
    assert stats["policy_updates"] == {"drafter": "kept", "finisher": "kept"}
    assert trainer.store.run_info("test")["status"] == "completed"
