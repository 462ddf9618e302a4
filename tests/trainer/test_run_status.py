"""A run's status tells the truth: an endpoint that fails every call ends the run `failed`
with a non-zero exit (through the CLI and a real HTTP server), and the run resumes once the
endpoint works again; SIGTERM ends it `cancelled` wherever in the event loop it lands."""

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from trainer_fakes import QA_STUB_REPLY, default_reply, make_parts, role_of
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core import signals
from langmarl.core.errors import RunFailedError
from langmarl.llm.types import ChatRequest
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.trainer import MonteCarloTrainer
from langmarl.trainer.health import check_failures


def _config(tmp_path: Path, llm: dict[str, object]) -> Path:
    config = tmp_path / "c.json"
    config.write_text(
        json.dumps(
            {
                "env": "language",
                "exp_name": "down",
                "num_iterations": 2,
                "trajectories_per_iteration": 2,
                "validation_size": 2,
                "llm": llm,
                "seed": 0,
                "runs_dir": str(tmp_path / "runs"),
                "checkpoint_dir": str(tmp_path / "ck"),
            }
        )
    )
    return config


@pytest.mark.parametrize("model", ["always-500", "always-401", "empty", "closed-port"])
def test_a_run_whose_every_llm_call_fails_ends_failed(tmp_path: Path, model: str) -> None:
    with OpenAIStub(responder=QA_STUB_REPLY) as stub:
        llm = stub.llm_config(model)
        if model == "closed-port":
            llm = stub.llm_config("ok", base_url="http://127.0.0.1:9/v1")
        result = CliRunner().invoke(build_app(), ["train", str(_config(tmp_path, llm))])
    assert result.exit_code != 0, result.output
    assert "Status: failed" in result.output
    assert "iteration 1: 2 of 2 episodes failed" in " ".join(result.output.split())
    run = tmp_path / "runs" / "down"
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "failed" and "2 of 2 episodes failed" in info["error"]
    assert info["completed_iterations"] == 0
    assert sorted(p.name for p in (run / "policies").iterdir()) == ["iter_0000"]


def test_a_failed_run_resumes_its_iteration_once_the_endpoint_works(tmp_path: Path) -> None:
    app, runner = build_app(), CliRunner()
    with OpenAIStub(responder=QA_STUB_REPLY) as stub:
        config = _config(tmp_path, stub.llm_config("always-500"))
        assert runner.invoke(app, ["train", str(config)]).exit_code != 0
        config = _config(tmp_path, stub.llm_config("ok"))
        result = runner.invoke(app, ["train", str(config)])
    assert result.exit_code == 0, result.output
    assert "Status: completed" in result.output
    run = tmp_path / "runs" / "down"
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "completed" and info["completed_iterations"] == 2
    episodes = [json.loads(p.read_text()) for p in (run / "trajectories/iter_0000").glob("*.json")]
    assert len(episodes) == 2 and not any(e["metadata"].get("error") for e in episodes)


def test_the_failure_threshold() -> None:
    check_failures(0, "episodes", [None, None], 0.0)
    check_failures(0, "episodes", ["x", None], 0.5)  # one of two: at the limit, allowed
    check_failures(0, "episodes", [], 0.0)
    with pytest.raises(RunFailedError, match=r"2 of 3 episodes failed .*first error: boom"):
        check_failures(3, "episodes", ["boom", "bang", None], 0.5)
    with pytest.raises(RunFailedError, match="1 of 1 critic evaluations failed"):
        check_failures(0, "critic evaluations", ["x"], 1.0)  # all failing is never allowed


@pytest.fixture
def sigterm_cancels() -> Iterator[None]:
    """SIGTERM handled as the `langmarl` command handles it, undone (flag cleared) after."""
    before = signal.getsignal(signal.SIGTERM)
    signals.cancel_on_sigterm()
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
        signals._terminated.clear()


@pytest.mark.usefixtures("sigterm_cancels")
def test_sigterm_inside_a_nested_task_ends_the_run_cancelled(tmp_path: Path) -> None:
    """Issue 37: a SIGTERM handled inside a gradient call (a task of `gather`, inside a task
    of the evaluate phase) left run.json `running`, and the cancelled job read `failed`."""

    def reply(request: ChatRequest) -> str:
        if role_of(request) == "gradient" and not signals.termination_requested():
            os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in this task's frame
        return default_reply(request)

    trainer = MonteCarloTrainer(*make_parts(tmp_path, reply))
    with pytest.raises(signals.RunCancelled):
        trainer.train(2)
    info = trainer.store.read_json(trainer.run_id, "run.json")
    assert (info["status"], info["error"]) == ("cancelled", signals.CANCELLED_ERROR)
    assert info["completed_iterations"] == 0
