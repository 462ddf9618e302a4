"""`langmarl eval RUN`: the initial and the final (kept) policies side by side, each with n
and a 95% interval, over a real HTTP test server."""

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from langmarl.api import build_trainer
from langmarl.cli import build_app
from langmarl.config import LanguageTaskConfig
from langmarl.core.errors import ConfigError
from langmarl.envs.language.datasets import load_tasks
from langmarl.store.kinds import EvalRequest
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.roles import role_of_body
from langmarl.trainer.evaluation import HeldoutComparison, compare_run, evaluate_language

ANSWERS = {t["question"]: t["ground_truth"] for t in load_tasks("qa", None, None)}
GOOD = "You are the answerer: you give the GOOD final short answer on an 'Answer:' line."
BAD = "You are the answerer: you answer vaguely, on an 'Answer:' line."
RESEARCHER = "You are the researcher: you quote the one fact that matters."


class Team:
    """The stub's behaviour: actors answer right with a GOOD policy (with the starting
    policies too if ``default_right``), wrong otherwise; the answerer's rewrites are GOOD
    for the first ``good`` of them, BAD after."""

    def __init__(self, good: int = 1, default_right: bool = False) -> None:
        self.good, self.default_right = good, default_right
        self.rewrites = 0

    def __call__(self, body: dict[str, Any]) -> str:
        system, user = (str(m["content"]) for m in body["messages"][:2])
        role = role_of_body(body)
        if role == "actor":
            right = "GOOD" in system or (self.default_right and "vaguely" not in system)
            if not right:
                return "Answer: unknown"
            return next(f"Answer: {a}" for q, a in ANSWERS.items() if q in user)
        if role == "rewrite":
            if "Agent: answerer" not in user:
                return RESEARCHER
            self.rewrites += 1
            return GOOD if self.rewrites <= self.good else BAD
        if role == "critic":
            return '{"researcher": "quote the fact", "answerer": "answer from it"}'
        return "Answer from the context."


def _config(tmp_path: Path, stub: OpenAIStub, **fields: Any) -> LanguageTaskConfig:
    values = {
        "exp_name": "ev",
        "task_type": "qa",
        "num_iterations": 2,
        "trajectories_per_iteration": 2,
        "validation_size": 2,
        "llm": stub.llm_config(),
        "seed": 0,
        "runs_dir": str(tmp_path / "runs"),
        "checkpoint_dir": str(tmp_path / "ck"),
        **fields,
    }
    return LanguageTaskConfig.model_validate(values)


def test_eval_compares_initial_and_kept_policies_after_a_resume(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "ev"
    with OpenAIStub(responder=Team(good=1)) as stub:
        config = _config(tmp_path, stub)
        build_trainer(config, callbacks=[]).train(1)  # GOOD accepted
        metrics = build_trainer(config, callbacks=[]).train(2)  # resumed: BAD rejected
        assert [m["accepted_updates"] for m in metrics] == [2, 0]
        result = compare_run(run)
        typed = evaluate_language(run, EvalRequest(episodes=1))
        cli = CliRunner().invoke(build_app(), ["eval", str(run)])
    assert isinstance(typed, HeldoutComparison) and typed.run_id == "ev"
    assert (typed.initial.iteration, typed.final.iteration, typed.difference) == (0, 2, 1.0)
    assert typed.final.interval.n == 1 and typed.saved_to == run / "evals" / "test_compare.json"
    assert typed.headline().startswith("Held-out reward: 0.000 → 1.000 (n=1 ")
    initial, final = result["initial"], result["final"]
    assert (initial["iteration"], final["iteration"]) == (0, 2)
    assert initial["avg_reward"] == 0.0 and final["avg_reward"] == 1.0
    assert result["difference"] == 1.0 and result["note"] is None
    assert initial["num_episodes"] == final["num_episodes"] == 2  # the test split
    assert final["interval"]["method"] == "wilson" and final["interval"]["n"] == 2
    assert final["interval"]["high"] == 1.0 and 0.3 < final["interval"]["low"] < 0.4
    assert initial["task_ids"] == final["task_ids"]
    saved = json.loads((run / "evals" / "test_compare.json").read_text())
    assert saved["final"]["avg_reward"] == 1.0
    assert (run / "evals" / "test_iter_0000.json").exists()
    assert json.loads((run / "evals" / "test_iter_0002.json").read_text())["avg_reward"] == 1.0
    assert cli.exit_code == 0, cli.output
    for text in ("initial (checkpoint 0)", "final (checkpoint 2)", "Wilson", "+1.000"):
        assert text in cli.output


def test_a_run_with_no_trained_iteration_is_evaluated_once_with_a_note(tmp_path: Path) -> None:
    with OpenAIStub(responder=Team()) as stub:
        build_trainer(_config(tmp_path, stub), callbacks=[]).train(0)
        result = compare_run(tmp_path / "runs" / "ev")
        calls = len(stub.bodies)
    assert result["same_policies"] and result["difference"] == 0.0
    assert "no trained iteration yet" in result["note"]
    assert calls == 2 * result["initial"]["num_episodes"]  # evaluated once, not twice


def test_a_run_whose_updates_were_all_rejected_says_so(tmp_path: Path) -> None:
    with OpenAIStub(responder=Team(good=0, default_right=True)) as stub:
        config = _config(tmp_path, stub, num_agents=1)  # the answerer alone: BAD only
        build_trainer(config, callbacks=[]).train(1)
        result = compare_run(tmp_path / "runs" / "ev")
    assert result["same_policies"] and "no update was accepted" in result["note"]
    assert result["final"]["iteration"] == 1
    assert (tmp_path / "runs" / "ev" / "evals" / "test_iter_0001.json").exists()


def test_eval_of_a_missing_checkpoint_names_the_available_ones(tmp_path: Path) -> None:
    with OpenAIStub(responder=Team()) as stub:
        build_trainer(_config(tmp_path, stub), callbacks=[]).train(0)
        with pytest.raises(ConfigError, match=r"no policy checkpoint 5; available: \[0\]"):
            compare_run(tmp_path / "runs" / "ev", iteration=5)
