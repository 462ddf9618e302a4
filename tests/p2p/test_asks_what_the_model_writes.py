"""``summary_judge`` and ``narrative`` at ``auto`` ask a model that writes (an endpoint) for
its verdict and its narrative, and a local model, which ranks options, for neither; ``true``
asks a local model too (scripted LLM, fake trainer)."""

import json
from pathlib import Path

import pytest

from langmarl.p2p import SessionRecord
from langmarl.p2p.session.loop import LoopConfig, run_loop
from langmarl.testing import ScriptedLLM

from .test_loop import FakeTrainer, replies, validator

NARRATIVE = "The session trained the pendulum reward once and its judge scored it."


def _session(tmp_path: Path, local: bool, **config) -> tuple[list[str], dict, set[str]]:
    """The systems prompts sent, the analysis, and the judges of the one iteration."""
    answer = replies("SCORE: 0.4")
    llm = ScriptedLLM(lambda r: NARRATIVE if "summarise" in str(r.messages[0]["content"])
                      else answer(r))  # fmt: skip
    if local:  # what a local model's backend has: the log-probabilities of given text
        llm.backend.option_logprobs = lambda prefix, options: [0.0] * len(options)  # type: ignore[attr-defined]
    settings = {"env_id": "InvertedPendulum-v5", "code_judge": False, "max_iterations": 1,
                "candidates": 1, "author": "free_form", **config}  # fmt: skip
    result = run_loop("balance", LoopConfig(**settings), llm=llm, runs_dir=tmp_path,
                      validator=validator, trainer=FakeTrainer())  # fmt: skip
    session = SessionRecord(tmp_path / result.session_id)
    systems = [str(r.messages[0]["content"]) for r in llm.backend.requests]  # type: ignore[attr-defined]
    analysis = json.loads((session.path / "analysis.json").read_text())
    [record] = session.iteration_records()
    return systems, analysis, {j.judge for j in record.read_judgment().judges}


@pytest.mark.parametrize("local", [False, True])
def test_auto_asks_only_a_model_that_writes(tmp_path: Path, local: bool) -> None:
    systems, analysis, judges = _session(tmp_path, local)
    asked_to_judge = any("SCORE" in system for system in systems)
    assert asked_to_judge == ("summary" in judges) == (not local)
    assert analysis["narrative_source"] == ("rules" if local else "llm")
    if local:
        assert not analysis["narrative_note"]  # not asked, so nothing was refused
    else:
        assert analysis["narrative"] == NARRATIVE


def test_true_asks_a_local_model_too(tmp_path: Path) -> None:
    systems, analysis, judges = _session(tmp_path, True, summary_judge=True, narrative=True)
    assert "summary" in judges and any("SCORE" in system for system in systems)
    assert analysis["narrative_source"] == "llm"
