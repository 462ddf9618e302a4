"""The full loop with the embedded model, real sandbox and real training, tiny budget (slow)."""

import json
from pathlib import Path

import pytest

from langmarl.llm import LLMClient, LLMConfig, UsageLedger
from langmarl.p2p import SessionRecord
from langmarl.p2p.session.loop import LoopConfig, run_loop


@pytest.mark.slow
def test_two_iterations_with_every_stage_on_the_embedded_model_end_with_a_valid_status(
    tmp_path: Path,
):
    """Elaboration, authoring, review, a fix attempt, the code judge (sandboxed), the summary
    judge and, for the second iteration, the reviser all run on the 135M model: whatever it
    writes, the loop must end with an honest status and complete iteration records."""
    ledger = UsageLedger()
    # 24 tokens a call: the same stages, origins and judges as at 32 and 64 here (11 calls,
    # review and fix included, fallback then previous, neither judge's reply parses; the
    # loop's own CPU 8.7 s, 9.7 at 32, 20 at 64); the 135M model's code is cut short at all
    # three. At 16 the author's reply is too short to be reviewed: the review call goes
    llm = LLMClient(
        LLMConfig.from_preset("local").with_overrides(max_tokens=24, timeout=300.0),
        role="p2p",
        ledger=ledger,
    )
    config = LoopConfig(
        env_id="InvertedPendulum-v5", max_iterations=2, pass_threshold=1.0, max_fix_attempts=1,
        author="free_form",  # the free-form path's every stage (tests/p2p/test_structured.py:
        # the structured author on the embedded model); the judge and the narrative asked of
        # a local model too, which `auto` does not
        summary_judge=True, narrative=True,
        total_timesteps=128,  # one rollout a training: no assertion reads learning
        train={"num_steps": 128, "n_epochs": 1, "num_evals": 1, "eval_episodes": 1,
               "max_episode_steps": 50, "record_video": False},
    )  # fmt: skip
    result = run_loop("keep the pole balanced", config, llm=llm, runs_dir=tmp_path)
    assert result.status in ("max_iterations", "passed", "invalid_code"), result.error
    session = SessionRecord(tmp_path / result.session_id)
    assert session.read_status()["status"] == result.status
    records = session.iteration_records()
    if result.status == "max_iterations":
        assert len(result.iterations) == len(records) == 2 and result.best_iteration is not None
    for record in records:
        assert record.validate() == []
        assert record.read_reward_spec().origin in (
            "author",
            "demonstration",
            "revision",
            "fallback",
            "previous",
        )
        judgment = record.read_judgment()
        assert judgment is not None and 0.0 <= judgment.intent_score <= 1.0
        assert {j.judge for j in judgment.judges} >= {"code", "summary"}
    analysis = json.loads((session.path / "analysis.json").read_text())
    asked = analysis["narrative_source"] == "llm" or "LLM narrative not used" in str(
        analysis["narrative_note"]
    )
    assert asked, analysis  # the narrative was asked of the model, whether kept or not
    # elaborate + author + review (+ fix) + code judge + summary judge, then the reviser's
    calls = ledger.by_role()["p2p"]["calls"]
    assert calls >= (5 if len(records) == 1 else 7)
