"""Loop statuses with a scripted LLM, a fake validator and a fake trainer (no MuJoCo)."""

from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError, LLMError
from langmarl.llm.types import ChatRequest
from langmarl.p2p import SessionRecord
from langmarl.p2p.reward.validation import ValidationResult, check_static
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.testing import ScriptedLLM

from .conftest import PENDULUM_REWARD, FakeTrainer

REWARD_REPLY = f"```python\n{PENDULUM_REWARD.strip()}\n```"


def validator(source: str, env_id: str) -> ValidationResult:
    """Static checks plus the terms of the pendulum reward (stands in for the sandbox)."""
    result = check_static(source)
    if result.ok:
        result.terms, result.latex = {"upright": "up"}, "r"
    return result


def replies(score: str, reward: str = REWARD_REPLY):
    def reply(request: ChatRequest) -> str:
        system = str(request.messages[0]["content"])
        if "success criteria" in system:
            return "- the pole stays up"
        if "SCORE" in system:
            return score
        if "improve" in system:
            return reward + '\n```json\n{"learning_rate": 9}\n```'
        return reward

    return reply


def _run(tmp_path: Path, llm, trainer=None, **config) -> tuple:
    trainer = trainer or FakeTrainer()
    settings = {"env_id": "InvertedPendulum-v5", "code_judge": False, "max_iterations": 3,
                "candidates": 1, **config}  # fmt: skip  # one reward per iteration: the loop alone
    result = run_loop(
        "balance",
        LoopConfig(**settings),
        llm=llm,
        runs_dir=tmp_path,
        validator=validator,
        trainer=trainer,
    )
    return result, trainer, SessionRecord(tmp_path / result.session_id)


def test_passes_when_the_judge_is_satisfied(tmp_path: Path):
    result, _, session = _run(tmp_path, ScriptedLLM(replies("SCORE: 0.9")))
    assert result.status == "passed" and len(result.iterations) == 1
    assert result.best_iteration == 1 and result.best_score == pytest.approx(0.9)
    assert session.read_status()["status"] == "passed"
    it = session.iteration_records()[0]
    assert it.read_reward_spec().origin == "author" and it.read_judgment().passed
    assert it.prompt_path.read_text() == "balance"


def test_max_iterations_revises_reward_and_clamps_hparams(tmp_path: Path):
    result, trainer, session = _run(tmp_path, ScriptedLLM(replies("SCORE: 0.2")))
    assert result.status == "max_iterations" and len(result.iterations) == 3
    assert [s.reward_origin for s in result.iterations] == ["author", "revision", "revision"]
    assert result.iterations[0].hp_changes == {"learning_rate": 3e-3}
    assert trainer.calls[1][1].learning_rate == 3e-3
    assert session.iteration_records()[0].revised_reward_path.is_file()
    assert session.read_history()["status"] == "max_iterations"
    last = session.iteration_records()[-1].read_judgment()
    assert "intent_plateau" in last.failure_tags and last.warnings[-1].startswith("intent score")


def test_best_iteration_is_tracked(tmp_path: Path):
    scores = iter(["SCORE: 0.3", "SCORE: 0.6", "SCORE: 0.4"])

    def reply(request: ChatRequest) -> str:
        system = str(request.messages[0]["content"])
        return next(scores) if "SCORE" in system else replies("")(request)

    result, _, _ = _run(tmp_path, ScriptedLLM(reply))
    assert result.best_iteration == 2 and result.best_score == pytest.approx(0.6)


def test_invalid_code_without_fallback(tmp_path: Path):
    llm = ScriptedLLM(replies("SCORE: 0.9", reward="```python\nimport os\n```"))
    result, trainer, _ = _run(tmp_path, llm, fallback="none", max_fix_attempts=1)
    assert result.status == "invalid_code" and trainer.calls == []
    assert "import of 'os'" in result.error


def test_fallback_template_is_trained_and_marked(tmp_path: Path):
    llm = ScriptedLLM(replies("SCORE: 0.1", reward="I do not know."))
    result, trainer, session = _run(tmp_path, llm, max_iterations=2, max_fix_attempts=0)
    assert result.status == "max_iterations"
    assert [s.reward_origin for s in result.iterations] == ["fallback", "previous"]
    assert "reward_survive" in trainer.calls[0][0]
    assert session.iteration_records()[0].read_reward_spec().origin == "fallback"
    assert result.iterations[1].validation_errors  # the failed revision is reported


def test_training_failure_is_an_error_status(tmp_path: Path):
    result, _, session = _run(
        tmp_path, ScriptedLLM(replies("SCORE: 0.9")), trainer=FakeTrainer(fail=True)
    )
    assert result.status == "error" and "boom" in result.error
    assert session.iteration_records()[0].read_status()["status"] == "error"


def test_llm_failure_is_an_error_status(tmp_path: Path):
    llm = ScriptedLLM([LLMError("scripted", "m", "down")])
    result, _, session = _run(tmp_path, llm)
    assert result.status == "error" and "down" in result.error
    assert session.read_status()["status"] == "error"


def test_unknown_env_is_a_config_error(tmp_path: Path):
    with pytest.raises(ConfigError, match="Did you mean 'HalfCheetah-v5'"):
        run_loop(
            "x", LoopConfig(env_id="HalfCheetah-v4"), llm=ScriptedLLM(["x"]), runs_dir=tmp_path
        )


def test_interrupt_marks_the_session_cancelled(tmp_path: Path):
    def trainer(*args: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, ScriptedLLM(replies("SCORE: 0.9")), trainer=trainer)
    (session_dir,) = tmp_path.iterdir()
    assert SessionRecord(session_dir).read_status()["status"] == "cancelled"


def test_a_code_judge_that_could_not_be_written_is_recorded(tmp_path: Path):
    # every reply is reward code, so authoring a judge_fn fails: the judgment must say so
    result, _, session = _run(
        tmp_path, ScriptedLLM(replies("SCORE: 0.9")), code_judge=True, max_iterations=1
    )
    judgment = session.iteration_records()[0].read_judgment()
    code = [j for j in judgment.judges if j.judge == "code"]
    assert len(code) == 1 and code[0].score is None
    assert code[0].reason.startswith("no usable judge_fn")
    assert judgment.intent_score == pytest.approx(0.9)  # the summary judge alone decides
    assert "[code] no usable judge_fn" in judgment.diagnosis
    assert result.status == "passed"
