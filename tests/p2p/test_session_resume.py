"""Resuming Prompt2Policy sessions: a scripted LLM and a fake trainer stand in for the model
and PPO; a ``Killed`` BaseException stands in for SIGKILL (nothing of the loop catches it,
so the files are left as a kill leaves them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError, RunLockedError
from langmarl.llm.types import ChatRequest
from langmarl.p2p import SessionRecord
from langmarl.p2p.agents.prompts import NARRATIVE_SYSTEM
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.p2p.session.resume import resume_session
from langmarl.store.lock import RunLock
from langmarl.store.run import RunDir
from langmarl.testing import ScriptedLLM

from .conftest import PENDULUM_REWARD, FakeTrainer
from .test_loop import REWARD_REPLY, _run, replies, validator

REVISED = PENDULUM_REWARD.replace("Keep the pole upright.", "Keep the pole upright, revised.")


class Killed(BaseException):
    """The process dies here."""


class KillingTrainer(FakeTrainer):
    """A FakeTrainer that dies on call ``kill_on`` after writing part of its outputs."""

    def __init__(self, kill_on: int) -> None:
        super().__init__()
        self.kill_on = kill_on

    def __call__(self, it, reward, configs, seeds):
        if len(self.calls) + 1 == self.kill_on:
            self.calls.append((reward.read_text(), configs[0]))
            (it.path / "metrics").mkdir()
            (it.path / "metrics" / "scalars.jsonl").write_text('{"step": 64}\n')
            raise Killed
        return super().__call__(it, reward, configs, seeds)


def reviser_replies(reward: str, score: str = "SCORE: 0.2", asked: list[str] | None = None):
    """Replies whose reviser proposes ``reward`` and a learning rate clamped to 3e-3;
    ``asked`` collects which agent each request went to."""

    def reply(request: ChatRequest) -> str:
        system = str(request.messages[0]["content"])
        if asked is not None:
            asked.append("judge" if "SCORE" in system else "revise" if "improve" in system
                         else "narrative" if system == NARRATIVE_SYSTEM else "other")  # fmt: skip
        if "improve" in system:
            return f"```python\n{reward.strip()}\n```" + '\n```json\n{"learning_rate": 9}\n```'
        return replies(score)(request)

    return reply


def _resume(session: SessionRecord, trainer: FakeTrainer, llm: ScriptedLLM):
    return resume_session(session.path, llm=llm, validator=validator, trainer=trainer)


def _killed(tmp_path: Path, llm: ScriptedLLM, trainer: FakeTrainer) -> SessionRecord:
    with pytest.raises(Killed):
        _run(tmp_path, llm, trainer=trainer)
    (path,) = tmp_path.iterdir()
    return SessionRecord(path)


def test_killed_while_training_iteration_2_it_is_trained_again_on_the_revision(tmp_path: Path):
    session = _killed(tmp_path, ScriptedLLM(reviser_replies(REVISED)), KillingTrainer(kill_on=2))
    assert RunDir(session.path).record().status == "running"  # this process lives on
    RunDir(session.path).log_metrics(2, intent_score=0.1)  # a line written just before the kill
    asked: list[str] = []
    other_revision = REVISED.replace("revised", "another")
    trainer = FakeTrainer()
    result = _resume(session, trainer, ScriptedLLM(reviser_replies(other_revision, asked=asked)))
    assert result.status == "max_iterations"
    assert [s.iteration for s in result.iterations] == [1, 2, 3]
    assert [s.reward_origin for s in result.iterations] == ["author", "revision", "revision"]
    # iteration 2 trains on what the first process's reviser produced, not a new revision
    assert trainer.calls[0][0].strip() == REVISED.strip()
    assert trainer.calls[0][1].learning_rate == 3e-3
    assert trainer.calls[1][0].strip() == other_revision.strip() and len(trainer.calls) == 2
    assert "other" not in asked  # neither criteria nor a first reward were asked for again
    assert asked[-1] == "narrative"  # the session's analysis, once it ended
    assert asked.count("revise") == 1 and asked.count("judge") == 2
    assert [m["step"] for m in RunDir(session.path).metrics()] == [1, 2, 3]
    scalars = session.iteration(2).scalars_path
    assert not scalars.exists()  # the killed attempt's partial output is gone
    record = RunDir(session.path).record()
    assert (record.status, record.outcome, record.attempts) == ("completed", "max_iterations", 2)  # type: ignore[attr-defined]
    assert session.read_history()["iterations"][0]["hp_changes"] == {"learning_rate": 3e-3}


def test_killed_while_revising_it_revises_again_without_retraining(tmp_path: Path):
    def dies_when_revising(request: ChatRequest) -> str:
        if "improve" in str(request.messages[0]["content"]):
            raise Killed
        return replies("SCORE: 0.2")(request)

    session = _killed(tmp_path, ScriptedLLM(dies_when_revising), FakeTrainer())
    assert [s["intent_score"] for s in session.read_history()["iterations"]] == [0.2]
    trainer = FakeTrainer()
    result = _resume(session, trainer, ScriptedLLM(reviser_replies(REVISED)))
    assert [s.iteration for s in result.iterations] == [1, 2, 3]
    assert len(trainer.calls) == 2  # iterations 2 and 3
    assert trainer.calls[0][0].strip() == REVISED.strip()
    assert result.iterations[0].hp_changes == {"learning_rate": 3e-3}
    assert [m["step"] for m in RunDir(session.path).metrics()] == [1, 2, 3]


def test_killed_before_the_history_lists_an_iteration_it_is_written_again(tmp_path: Path):
    session = _killed(tmp_path, ScriptedLLM(reviser_replies(REVISED)), KillingTrainer(kill_on=1))
    history = session.read_history()
    history["iterations"] = []  # as if killed between writing iter_1 and listing it
    session.save_history(history)
    stale = session.iteration(1).path / "judgment.json"
    stale.write_text("{}")
    result = _resume(session, FakeTrainer(), ScriptedLLM(reviser_replies(REVISED, "SCORE: 0.9")))
    assert result.status == "passed" and [s.iteration for s in result.iterations] == [1]
    assert session.iteration(1).read_judgment().passed
    assert result.best_iteration == 1 and result.criteria == "- the pole stays up"


def test_a_failed_session_resumes_and_keeps_its_best(tmp_path: Path):
    scores = iter(["SCORE: 0.6", "SCORE: 0.3"])

    def reply(request: ChatRequest) -> str:
        if "SCORE" in str(request.messages[0]["content"]):
            return next(scores)
        return replies("")(request)

    class FailsThirdTime(FakeTrainer):
        def __call__(self, it, reward, configs, seeds):
            self.fail = len(self.calls) == 2
            return super().__call__(it, reward, configs, seeds)

    result, _, session = _run(tmp_path, ScriptedLLM(reply), trainer=FailsThirdTime())
    assert result.status == "error" and "boom" in result.error
    assert RunDir(session.path).record().status == "failed"
    resumed = _resume(session, FakeTrainer(), ScriptedLLM(replies("SCORE: 0.4")))
    assert resumed.status == "max_iterations" and resumed.error is None
    assert [s.intent_score for s in resumed.iterations] == [0.6, 0.3, 0.4]
    assert (resumed.best_iteration, resumed.best_score) == (1, 0.6)
    assert [m["step"] for m in RunDir(session.path).metrics()] == [1, 2, 3]


def test_a_completed_session_is_not_resumed(tmp_path: Path):
    _, trainer, session = _run(tmp_path, ScriptedLLM(replies("SCORE: 0.9")))
    with pytest.raises(ConfigError, match=r"already ended \(passed\).*langmarl p2p run"):
        _resume(session, trainer, ScriptedLLM(replies("SCORE: 0.9")))
    assert RunDir(session.path).record().attempts == 1


def test_a_directory_that_is_no_session_is_refused(tmp_path: Path):
    with pytest.raises(ConfigError, match=r"not a Prompt2Policy session.*langmarl p2p run"):
        resume_session(tmp_path, llm=ScriptedLLM(["x"]))
    assert not (tmp_path / ".lock").exists()
    RunDir(tmp_path / "grpo").start("parl_grpo")
    with pytest.raises(ConfigError, match="grpo is not a Prompt2Policy session"):
        resume_session(tmp_path / "grpo", llm=ScriptedLLM(["x"]))


def test_a_running_session_is_locked(tmp_path: Path):
    session = _killed(tmp_path, ScriptedLLM(replies("SCORE: 0.2")), KillingTrainer(kill_on=1))
    with RunLock(session.path), pytest.raises(RunLockedError, match="is in use by process"):
        _resume(session, FakeTrainer(), ScriptedLLM(replies("SCORE: 0.2")))


def test_a_new_session_does_not_overwrite_one(tmp_path: Path):
    result, _, _ = _run(tmp_path, ScriptedLLM(replies("SCORE: 0.9")))
    with pytest.raises(ConfigError, match="already holds a session: resume it"):
        run_loop(
            "balance", LoopConfig(env_id="InvertedPendulum-v5"), llm=ScriptedLLM([REWARD_REPLY]),
            runs_dir=tmp_path, session_id=result.session_id, validator=validator,
            trainer=FakeTrainer(),
        )  # fmt: skip


def test_a_stopped_session_resumes(tmp_path: Path):
    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, ScriptedLLM(replies("SCORE: 0.9")), trainer=interrupted)
    (path,) = tmp_path.iterdir()
    assert RunDir(path).record().status == "stopped"
    result = _resume(SessionRecord(path), FakeTrainer(), ScriptedLLM(replies("SCORE: 0.9")))
    assert (result.status, result.error, len(result.iterations)) == ("passed", None, 1)
    record = RunDir(path).record()
    assert (record.status, record.error, record.attempts) == ("completed", None, 2)
    assert [m["step"] for m in RunDir(path).metrics()] == [1]
